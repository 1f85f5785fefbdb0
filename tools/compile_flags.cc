#include "tools/compile_flags.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/device_limits.h"

namespace sharc::tools {

absl::StatusOr<hlo::PipelineOptions> PipelineOptionsFromFlags(const ParsedArgs& args) {
  hlo::PipelineOptions options = hlo::DefaultPipelineOptions();
  if (args.Has("verify-passes")) options.verify_each = true;
  if (args.Has("pass-timings")) options.timings = std::make_shared<hlo::PassTimings>();
  std::optional<std::string> dir = args.Get("dump-to");
  std::optional<std::string> re = args.Get("dump-pass-re");
  if (dir.has_value() != re.has_value()) {
    return absl::InvalidArgumentError("--dump-to and --dump-pass-re go together");
  }
  if (!dir) return options;
  try {
    std::regex check(*re, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dump-pass-re: '", *re, "' is not a regular expression: ", e.what()));
  }
  options.dump_to = *dir;
  options.dump_pass_re = *re;
  return options;
}

absl::StatusOr<driver::CompileOptions> CompileOptionsFromFlags(const ParsedArgs& args) {
  driver::CompileOptions options;
  if (auto d = args.Get("devices")) {
    ASSIGN_OR_RETURN(options.devices, ParseIntFlag("devices", *d, 1, hlo::kMaxDevices));
  }
  if (auto m = args.Get("mesh")) {
    absl::StatusOr<spmd::Mesh> mesh = spmd::Mesh::Parse(*m);
    if (!mesh.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
    }
    if (options.devices && *options.devices != mesh->num_devices()) {
      return absl::InvalidArgumentError(absl::StrCat("--mesh ", mesh->ToString(), " has ",
                                                     mesh->num_devices(), " devices but --devices ",
                                                     *options.devices));
    }
    options.mesh = *mesh;
  }
  if (auto mode = args.Get("mapreduce-mode")) {
    absl::StatusOr<spmd::MapReduceMode> parsed = spmd::ParseMapReduceMode(*mode);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--mapreduce-mode: ", parsed.status().message()));
    }
    options.mapreduce_mode = *parsed;
  }
  ASSIGN_OR_RETURN(options.pipeline, PipelineOptionsFromFlags(args));
  return options;
}

}  // namespace sharc::tools
