// Modules: parsing text and files, printing, copying, the entry's
// parameters, and the sharding annotations a caller sets on them.
#include "frontend/c_api/arrays.h"
#include "frontend/c_api/handles.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/verifier/runnable_types.h"
#include "driver/sharding_text.h"
#include "driver/module_loader.h"

namespace sharc::c_api {
namespace {

// Parses and verifies as `sharc verify` does, with the same diagnostics.
absl::StatusOr<std::unique_ptr<hlo::Module>> ParseText(std::string_view text,
                                                       const std::string& name) {
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, driver::ParseModuleText(text, name));
  RETURN_IF_ERROR(driver::VerifyLoadedModule(*module, name));
  absl::Status runnable = hlo::LowerForCompute(*module);  // it will be run
  if (runnable.ok()) runnable = hlo::CheckRunnableTypes(*module);
  if (!runnable.ok()) {
    return absl::Status(runnable.code(), absl::StrCat(name, ": error: ", runnable.message()));
  }
  return module;
}

absl::Status CheckParameterIndex(const hlo::Module& module, int64_t index, const char* function) {
  const int64_t count = module.entry()->num_parameters();
  if (index >= 0 && index < count) return absl::OkStatus();
  return absl::OutOfRangeError(absl::StrCat(function, ": parameter index ", index,
                                            " is out of range: the entry has ", count,
                                            " parameter(s)"));
}

std::string DescribeParameter(const hlo::Instruction& parameter) {
  return absl::StrCat("parameter ", parameter.parameter_number(), " (%", parameter.name(), ": ",
                      parameter.shape().ToString(), ")");
}

}  // namespace
}  // namespace sharc::c_api

using sharc::c_api::CheckNotNull;
using sharc::c_api::Guard;

extern "C" {

sharc_error* sharc_module_parse(const char* text, const char* filename, sharc_module** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(text, function, "text"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    const std::string name = filename != nullptr ? filename : "<input>";
    ASSIGN_OR_RETURN(std::unique_ptr<sharc::hlo::Module> module,
                     sharc::c_api::ParseText(text, name));
    *out = new sharc_module{std::move(module)};
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_parse_file(const char* path, sharc_module** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(path, function, "path"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    ASSIGN_OR_RETURN(std::unique_ptr<sharc::hlo::Module> module, sharc::driver::LoadModule(path));
    *out = new sharc_module{std::move(module)};
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_clone(const sharc_module* module, sharc_module** out) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(out, function, "out"));
    *out = new sharc_module{module->module->Clone()};
    return absl::OkStatus();
  });
}

void sharc_module_free(sharc_module* module) { delete module; }

sharc_error* sharc_module_print(const sharc_module* module, char** out_text) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(out_text, function, "out_text"));
    *out_text = sharc::c_api::CopyToCString(module->module->ToString());
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_num_parameters(const sharc_module* module, int64_t* out_count) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(out_count, function, "out_count"));
    *out_count = module->module->entry()->num_parameters();
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_parameter_shape(const sharc_module* module, int64_t index,
                                          sharc_dtype* out_dtype, int32_t* out_rank,
                                          int64_t* dims, int32_t dims_capacity) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(sharc::c_api::CheckParameterIndex(*module->module, index, function));
    sharc::c_api::ReportShape(module->module->entry()->parameter(index)->shape(), out_dtype,
                              out_rank, dims, dims_capacity);
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_set_mesh(sharc_module* module, const char* mesh) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(mesh, function, "mesh"));
    absl::Status set = sharc::driver::SetModuleMesh(*module->module, mesh);
    if (!set.ok()) return absl::InvalidArgumentError(absl::StrCat(function, ": ", set.message()));
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_set_parameter_sharding(sharc_module* module, int64_t index,
                                                 const char* sharding) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(sharding, function, "sharding"));
    RETURN_IF_ERROR(sharc::c_api::CheckParameterIndex(*module->module, index, function));
    sharc::hlo::Instruction* parameter = module->module->entry()->parameter(index);
    ASSIGN_OR_RETURN(sharc::hlo::Sharding parsed,
                     sharc::driver::ParseShardingForValue(
                         sharding, *module->module, parameter->shape(),
                         absl::StrCat(function, ": ", sharc::c_api::DescribeParameter(*parameter))));
    parameter->set_sharding(std::move(parsed));
    return absl::OkStatus();
  });
}

sharc_error* sharc_module_set_root_sharding(sharc_module* module, const char* sharding) {
  return Guard(__func__, [&](const char* function) -> absl::Status {
    RETURN_IF_ERROR(CheckNotNull(module, function, "module"));
    RETURN_IF_ERROR(CheckNotNull(sharding, function, "sharding"));
    sharc::hlo::Instruction* root = module->module->entry()->root();
    ASSIGN_OR_RETURN(sharc::hlo::Sharding parsed,
                     sharc::driver::ParseShardingForValue(
                         sharding, *module->module, root->shape(),
                         absl::StrCat(function, ": the root %", root->name(), " (",
                                      root->shape().ToString(), ")")));
    root->set_sharding(std::move(parsed));
    return absl::OkStatus();
  });
}

}  // extern "C"
