#include "driver/module_loader.h"

#include <sys/stat.h>

#include <fstream>
#include <iostream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/device_limits.h"
#include "hlo/ops/collective_devices.h"
#include "hlo/text/parser.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/verifier/runnable_types.h"
#include "hlo/verifier/verifier.h"

namespace sharc::driver {

std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

absl::StatusOr<std::string> ReadTextInput(const std::string& path) {
  const std::string name = DisplayName(path);
  std::string text;
  if (path == "-") {
    // Read in chunks so a runaway pipe is cut off at the limit.
    char buffer[1 << 16];
    while (std::cin.read(buffer, sizeof(buffer)) || std::cin.gcount() > 0) {
      text.append(buffer, static_cast<size_t>(std::cin.gcount()));
      if (static_cast<int64_t>(text.size()) > kMaxModuleFileBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": error: input is larger than ", kMaxModuleFileBytes, " bytes"));
      }
    }
    return text;
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(absl::StrCat(name, ": error: no such file"));
  }
  if (S_ISDIR(info.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": error: is a directory, not a file"));
  }
  if (S_ISREG(info.st_mode) && info.st_size > kMaxModuleFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": error: file is larger than ",
                                                   kMaxModuleFileBytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::PermissionDeniedError(absl::StrCat(name, ": error: cannot open file"));
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(name, ": error: read failed"));
  return text;
}

namespace {

absl::Status SetDeviceCount(const std::string& name, std::optional<int64_t> devices,
                            hlo::Module& module) {
  hlo::ModuleConfig& config = module.mutable_config();
  if (!hlo::HeaderDeclaresNoDevices(config)) {
    const int64_t declared = config.num_partitions * config.replica_count;
    if (devices && *devices != declared) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": error: --devices=", *devices, " but the module's header declares ", declared,
          " devices (num_partitions=", config.num_partitions,
          ", replica_count=", config.replica_count, ")"));
    }
    return absl::OkStatus();
  }
  // A per-device program: it runs on as many devices as it is told, or as
  // its collectives name. They are replicas when its collectives name
  // replicas (none has a channel_id), else partitions, sharc's SPMD unit.
  int64_t count = devices.value_or(hlo::DevicesNamedByCollectives(module));
  // A count taken from the collectives alone stops at the parser's bound on
  // tile assignments: ids beyond it are left to the verifier.
  if (count > 1 && count <= hlo::kMaxDevices) {
    (hlo::CollectivesNameReplicas(module) ? config.replica_count : config.num_partitions) = count;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<hlo::Module>> ParseModuleText(std::string_view text,
                                                             const std::string& name,
                                                             std::optional<int64_t> devices) {
  hlo::ParseOptions parse_options;
  parse_options.filename = name;
  parse_options.max_input_bytes = kMaxModuleFileBytes;
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseModule(text, parse_options);
  if (!module.ok()) {
    // The parser's messages already start with "FILE:LINE:COL: error: ".
    absl::string_view message = module.status().message();
    if (absl::StartsWith(message, name + ":")) return module.status();
    return absl::Status(module.status().code(), absl::StrCat(name, ": error: ", message));
  }
  RETURN_IF_ERROR(SetDeviceCount(name, devices, **module));
  return module;
}

absl::Status VerifyLoadedModule(const hlo::Module& module, const std::string& name) {
  absl::Status verified = hlo::VerifyModule(module);
  if (verified.ok()) return verified;
  return absl::Status(verified.code(), absl::StrCat(name, ": error: ", verified.message()));
}

absl::StatusOr<std::unique_ptr<hlo::Module>> LoadModule(const std::string& path,
                                                        const LoadOptions& options) {
  const std::string name = DisplayName(path);
  ASSIGN_OR_RETURN(std::string text, ReadTextInput(path));
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                   ParseModuleText(text, name, options.devices));
  if (options.verify) {
    RETURN_IF_ERROR(VerifyLoadedModule(*module, name));
  }
  if (!options.allow_unrunnable_types) {
    absl::Status runnable = hlo::LowerForCompute(*module);
    if (runnable.ok()) {
      runnable = options.allow_transfers ? hlo::CheckPartitionableTypes(*module)
                                         : hlo::CheckRunnableTypes(*module);
    }
    if (!runnable.ok()) {
      return absl::Status(runnable.code(), absl::StrCat(name, ": error: ", runnable.message()));
    }
  }
  return module;
}

}  // namespace sharc::driver
