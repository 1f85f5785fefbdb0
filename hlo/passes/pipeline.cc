#include "hlo/passes/pipeline.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "hlo/base/status_macros.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/verifier.h"

namespace sharc::hlo {

PipelineOptions DefaultPipelineOptions() {
  PipelineOptions options;
  const char* verify = std::getenv("SHARC_VERIFY_PASSES");
  options.verify_each = verify != nullptr && std::string_view(verify) == "1";
  return options;
}

// Writes the module between two passes when either matches the regex.
class Pipeline::Dumper {
 public:
  static absl::StatusOr<Dumper> Make(const PipelineOptions& options, std::string_view pipeline) {
    Dumper dumper;
    if (options.dump_to.empty() || options.dump_pass_re.empty()) return dumper;
    try {
      dumper.re_.emplace(options.dump_pass_re, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--dump-pass-re: '", options.dump_pass_re, "' is not a regular expression: ", e.what()));
    }
    std::error_code ec;
    std::filesystem::create_directories(options.dump_to, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dump-to: cannot create '", options.dump_to, "': ", ec.message()));
    }
    // Like XLA's module unique ids: every dumping run in the process gets
    // its own number, so two compiles into one directory do not collide.
    static std::atomic<int> next_id{0};
    dumper.dir_ = options.dump_to;
    dumper.prefix_ = next_id++;
    dumper.pipeline_ = std::string(pipeline);
    return dumper;
  }

  absl::Status Between(std::string_view prev, std::string_view next, const Module& module) {
    if (!re_ || !(Matches(prev) || Matches(next))) return absl::OkStatus();
    const std::string file =
        absl::StrFormat("module_%04d.%s.%04d.%s.after_%s.before_%s.txt", prefix_, module.name(),
                        step_++, pipeline_, std::string(prev), std::string(next));
    const std::filesystem::path path = std::filesystem::path(dir_) / file;
    std::ofstream out(path);
    out << PrintModule(module);
    out.close();
    if (!out) return absl::InvalidArgumentError(absl::StrCat("--dump-to: cannot write ", path.string()));
    return absl::OkStatus();
  }

 private:
  // The pipeline's edges are not passes; they dump with their neighbour.
  bool Matches(std::string_view pass) const {
    if (pass == "pipeline-start" || pass == "pipeline-end") return false;
    return std::regex_search(pass.begin(), pass.end(), *re_);
  }

  std::optional<std::regex> re_;
  std::string dir_;
  std::string pipeline_;
  int prefix_ = 0;
  int step_ = 0;
};

Pipeline::Pipeline(std::string name, PipelineOptions options)
    : name_(std::move(name)), options_(std::move(options)) {}

absl::Status Pipeline::RunPass(Pass& pass, Module& module) {
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> changed = pass.Run(module);
  const absl::Duration time = absl::Now() - start;
  records_.push_back({std::string(pass.name()), time, changed.value_or(false)});
  if (options_.timings) options_.timings->Record(pass.name(), time);
  RETURN_IF_ERROR(changed.status());
  if (options_.verify_each) {
    // Shardings against the device count are the user's input, which the
    // passes report in their own words (a --devices that does not fit the
    // annotations is the partitioner's error to give); what is checked here
    // is what a pass could have broken.
    VerifyOptions verify;
    verify.check_sharding_devices = false;
    if (absl::Status verified = VerifyModule(module, verify); !verified.ok()) {
      return absl::InternalError(absl::StrCat("the module does not verify after pass '",
                                              std::string(pass.name()), "': ", verified.message()));
    }
  }
  if (observer_) RETURN_IF_ERROR(observer_(pass, module));
  return absl::OkStatus();
}

absl::Status Pipeline::Run(Module& module) {
  records_.clear();
  failed_pass_.clear();
  ASSIGN_OR_RETURN(Dumper dumper, Dumper::Make(options_, name_));
  std::string_view prev = "pipeline-start";
  for (const std::unique_ptr<Pass>& pass : passes_) {
    RETURN_IF_ERROR(dumper.Between(prev, pass->name(), module));
    if (absl::Status st = RunPass(*pass, module); !st.ok()) {
      failed_pass_ = std::string(pass->name());
      return st;
    }
    prev = pass->name();
  }
  return dumper.Between(prev, "pipeline-end", module);
}

}  // namespace sharc::hlo
