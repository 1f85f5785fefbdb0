#include "tools/module_transform.h"

#include "hlo/text/printer.h"
#include "spmd/variance.h"
#include "tools/exit_codes.h"
#include "tools/module_loader.h"

namespace sharc::tools {

int PrintTransformedModule(const std::string& path, const ModuleTransform& transform,
                           std::ostream& out, std::ostream& err) {
  auto module = LoadModule(path);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  absl::Status typed = spmd::InferDeviceVariance(**module);
  absl::StatusOr<std::unique_ptr<hlo::Module>> result =
      typed.ok() ? transform(**module) : absl::StatusOr<std::unique_ptr<hlo::Module>>(typed);
  if (result.ok()) {
    typed = spmd::InferDeviceVariance(**result);
    if (!typed.ok()) result = typed;
  }
  if (!result.ok()) {
    err << DisplayName(path) << ": error: " << result.status().message() << "\n";
    return kExitInputError;
  }
  out << hlo::PrintModule(**result);
  return kExitOk;
}

}  // namespace sharc::tools
