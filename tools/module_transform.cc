#include "tools/module_transform.h"

#include "hlo/base/status_macros.h"
#include "hlo/text/printer.h"
#include "spmd/variance.h"
#include "driver/exit_codes.h"
#include "driver/module_loader.h"

namespace sharc::tools {

using driver::DisplayName;
using driver::LoadModule;
using driver::kExitInputError;
using driver::kExitOk;

absl::StatusOr<std::unique_ptr<hlo::Module>> ApplyTypedTransform(const hlo::Module& module,
                                                                 const ModuleTransform& transform) {
  // Typing rewrites implicit casts in place, so it works on a copy.
  std::unique_ptr<hlo::Module> typed = module.Clone();
  RETURN_IF_ERROR(spmd::InferDeviceVariance(*typed));
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> result, transform(*typed));
  RETURN_IF_ERROR(spmd::InferDeviceVariance(*result));
  return result;
}

int PrintTransformedModule(const std::string& path, const ModuleTransform& transform,
                           std::ostream& out, std::ostream& err) {
  auto module = LoadModule(path);
  if (!module.ok()) {
    err << module.status().message() << "\n";
    return kExitInputError;
  }
  absl::StatusOr<std::unique_ptr<hlo::Module>> result = ApplyTypedTransform(**module, transform);
  if (!result.ok()) {
    err << DisplayName(path) << ": error: " << result.status().message() << "\n";
    return kExitInputError;
  }
  out << hlo::PrintModule(**result);
  return kExitOk;
}

}  // namespace sharc::tools
