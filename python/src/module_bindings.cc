// sharc._sharc._Module: a global HLO module and the module-to-module stages
// the `sharc` command has (propagate, partition, explain, grad, jvp,
// transpose, compare), each through the same tools:: function the command
// calls. The Python package (sharc/__init__.py) wraps it in sharc.Module.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "autodiff/transpose_module.h"
#include "errors.h"
#include "hlo/ir/module.h"
#include "hlo/text/printer.h"
#include "module_handle.h"
#include "spmd/mesh.h"
#include "spmd/propagation.h"
#include "tools/compare_variants.h"
#include "driver/compile_stages.h"
#include "driver/module_loader.h"
#include "tools/module_transform.h"
#include "driver/sharding_text.h"

namespace sharc::python {
namespace {

namespace py = pybind11;

std::unique_ptr<hlo::Module> ParseAndVerify(const std::string& text, const std::string& name) {
  std::unique_ptr<hlo::Module> module =
      ValueOrThrow(driver::ParseModuleText(text, name), Stage::kParse);
  ThrowIfError(driver::VerifyLoadedModule(*module, name), Stage::kVerify);
  return module;
}

ModuleHandle Parse(const std::string& text, const std::string& filename) {
  return ModuleHandle{ParseAndVerify(text, filename)};
}

ModuleHandle Load(const std::string& path) {
  std::string text = ValueOrThrow(driver::ReadTextInput(path), Stage::kParse);
  return ModuleHandle{ParseAndVerify(text, driver::DisplayName(path))};
}

}  // namespace

py::dict Describe(const hlo::Module& module, const hlo::Instruction& value) {
  py::dict out;
  out["name"] = value.name();
  const hlo::Shape& shape = value.shape();
  if (shape.is_array()) {
    out["dtype"] = hlo::PrimitiveTypeName(shape.type());
    out["shape"] = py::tuple(py::cast(std::vector<int64_t>(shape.dims().begin(), shape.dims().end())));
  } else {
    out["dtype"] = py::none();
    out["shape"] = py::none();
  }
  out["type"] = shape.ToString();
  out["sharding"] = value.has_sharding() ? py::cast(value.sharding()->ToString()) : py::none();
  out["spec"] = py::none();
  if (value.has_sharding() && shape.is_array() && !module.config().mesh.empty()) {
    absl::StatusOr<spmd::Mesh> mesh = spmd::Mesh::Create(module.config().mesh);
    if (mesh.ok()) {
      absl::StatusOr<spmd::PartitionSpec> spec =
          spmd::ToPartitionSpec(*mesh, *value.sharding(), shape.rank());
      if (spec.ok()) out["spec"] = spec->dims();
    }
  }
  return out;
}

namespace {

// The options the compiling stages share, from Python keywords.
driver::CompileOptions ResolveOptions(std::optional<int64_t> devices,
                                     std::optional<std::string> mesh,
                                     const std::string& mapreduce_mode) {
  driver::CompileOptions options;
  if (devices && *devices < 1) {
    throw py::value_error(absl::StrCat("devices must be at least 1, got ", *devices));
  }
  options.devices = devices;
  if (mesh) {
    absl::StatusOr<spmd::Mesh> parsed = spmd::Mesh::Parse(*mesh);
    if (!parsed.ok()) {
      throw py::value_error(absl::StrCat("mesh '", *mesh, "': ", parsed.status().message()));
    }
    if (devices && *devices != parsed->num_devices()) {
      throw py::value_error(absl::StrCat("the mesh ", parsed->ToString(), " has ",
                                         parsed->num_devices(), " devices but devices=",
                                         *devices));
    }
    options.mesh = *parsed;
  }
  absl::StatusOr<spmd::MapReduceMode> mode = spmd::ParseMapReduceMode(mapreduce_mode);
  if (!mode.ok()) {
    throw py::value_error(absl::StrCat("mapreduce_mode: ", mode.status().message()));
  }
  options.mapreduce_mode = *mode;
  return options;
}

std::unique_ptr<hlo::Module> Prepared(const hlo::Module& module,
                                      const driver::CompileOptions& options) {
  std::unique_ptr<hlo::Module> copy = module.Clone();
  ThrowIfError(driver::PrepareModule(*copy, options), Stage::kPartition);
  return copy;
}

ModuleHandle Propagate(const ModuleHandle& self, std::optional<int64_t> devices,
                       std::optional<std::string> mesh, const std::string& mapreduce_mode) {
  driver::CompileOptions options = ResolveOptions(devices, std::move(mesh), mapreduce_mode);
  std::unique_ptr<hlo::Module> module = Prepared(*self.module, options);
  absl::Status propagated;
  {
    py::gil_scoped_release release;
    propagated = driver::PropagateModule(*module, options.devices).status();
  }
  ThrowIfError(propagated, Stage::kPartition);
  return ModuleHandle{std::move(module)};
}

py::dict Explain(const ModuleHandle& self, const std::string& name,
                 std::optional<int64_t> devices, std::optional<std::string> mesh,
                 const std::string& mapreduce_mode) {
  driver::CompileOptions options = ResolveOptions(devices, std::move(mesh), mapreduce_mode);
  std::unique_ptr<hlo::Module> module = Prepared(*self.module, options);
  spmd::PropagationResult result =
      ValueOrThrow(driver::PropagateModule(*module, options.devices), Stage::kPartition);
  absl::StatusOr<spmd::ShardingExplanation> explanation =
      spmd::ExplainShardingSteps(*module, result, name);
  if (absl::IsNotFound(explanation.status())) {
    throw py::key_error(std::string(explanation.status().message()));
  }
  ThrowIfError(explanation.status(), Stage::kPartition);
  py::list steps;
  for (const spmd::ShardingExplanation::Step& step : explanation->steps) {
    py::dict d;
    d["value"] = step.value;
    d["how"] = step.how.empty() ? py::none() : py::cast(step.how);
    d["priority"] = step.aggressiveness >= 0 ? py::cast(step.aggressiveness) : py::none();
    d["from"] = step.from.empty() ? py::none() : py::cast(step.from);
    steps.append(d);
  }
  py::dict out;
  out["name"] = explanation->name;
  out["sharding"] = explanation->sharding.empty() ? py::none() : py::cast(explanation->sharding);
  out["steps"] = steps;
  out["text"] = ValueOrThrow(spmd::ExplainSharding(*module, result, name), Stage::kPartition);
  // The partitioner's choice of plan (`sharc partition --explain`), from the
  // same implementation.
  spmd::PartitionOptions partition;
  partition.num_devices = module->config().num_partitions;
  out["plan"] = ValueOrThrow(spmd::ExplainPartitionChoice(*module, name, partition),
                             Stage::kPartition);
  return out;
}

ModuleHandle Partition(const ModuleHandle& self, std::optional<int64_t> devices,
                       std::optional<std::string> mesh, const std::string& mapreduce_mode,
                       bool propagate, const std::string& stop_after) {
  driver::CompileOptions options = ResolveOptions(devices, std::move(mesh), mapreduce_mode);
  absl::StatusOr<spmd::PartitionOptions::Stage> stage = spmd::ParsePartitionStage(stop_after);
  if (!stage.ok()) throw py::value_error(absl::StrCat("stop_after: ", stage.status().message()));
  std::unique_ptr<hlo::Module> module = Prepared(*self.module, options);
  absl::StatusOr<std::unique_ptr<hlo::Module>> local;
  {
    py::gil_scoped_release release;
    local = driver::PartitionGlobal(*module, options.devices, propagate, *stage);
  }
  return ModuleHandle{ValueOrThrow(std::move(local), Stage::kPartition)};
}

ModuleHandle Transform(const ModuleHandle& self, const tools::ModuleTransform& transform) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> result;
  {
    py::gil_scoped_release release;
    result = tools::ApplyTypedTransform(*self.module, transform);
  }
  return ModuleHandle{ValueOrThrow(std::move(result), Stage::kTransform)};
}

py::list Compare(const ModuleHandle& self, std::optional<int64_t> devices,
                 std::optional<std::string> mesh) {
  driver::CompileOptions options = ResolveOptions(devices, std::move(mesh), "annotated");
  absl::StatusOr<tools::LabelledReports> reports;
  {
    py::gil_scoped_release release;
    reports = tools::CompareVariants(*self.module, options);
  }
  py::list out;
  for (const auto& [label, report] : ValueOrThrow(std::move(reports), Stage::kPartition)) {
    out.append(py::make_tuple(label, report.ToJson()));
  }
  return out;
}

void SetSharding(hlo::Module& module, hlo::Instruction& value, const std::string& sharding,
                 const std::string& what) {
  absl::StatusOr<hlo::Sharding> parsed =
      driver::ParseShardingForValue(sharding, module, value.shape(), what);
  if (!parsed.ok()) throw py::value_error(std::string(parsed.status().message()));
  value.set_sharding(*std::move(parsed));
}

hlo::Instruction& ParameterAt(const ModuleHandle& self, int64_t index) {
  const int64_t count = self.module->entry()->num_parameters();
  if (index < 0 || index >= count) {
    throw py::index_error(absl::StrCat("parameter index ", index,
                                       " is out of range: the entry has ", count,
                                       " parameter(s)"));
  }
  return *self.module->entry()->parameter(index);
}

}  // namespace

void RegisterModule(py::module_& m) {
  m.def("parse", &Parse, py::arg("text"), py::arg("filename") = "<string>");
  m.def("load", &Load, py::arg("path"));
  py::class_<ModuleHandle>(m, "_Module")
      .def("text", [](const ModuleHandle& self) { return hlo::PrintModule(*self.module); })
      .def("clone", [](const ModuleHandle& self) { return ModuleHandle{self.module->Clone()}; })
      .def("verify",
           [](const ModuleHandle& self) {
             ThrowIfError(driver::VerifyLoadedModule(*self.module, self.module->name()),
                          Stage::kVerify);
           })
      .def_property_readonly("name", [](const ModuleHandle& self) { return self.module->name(); })
      .def_property_readonly(
          "num_partitions",
          [](const ModuleHandle& self) { return self.module->config().num_partitions; })
      .def_property_readonly("mesh",
                             [](const ModuleHandle& self) -> std::optional<std::string> {
                               if (self.module->config().mesh.empty()) return std::nullopt;
                               absl::StatusOr<spmd::Mesh> mesh =
                                   spmd::Mesh::Create(self.module->config().mesh);
                               if (!mesh.ok()) return std::nullopt;
                               return mesh->ToString();
                             })
      .def("parameters",
           [](const ModuleHandle& self) {
             py::list out;
             for (int64_t i = 0; i < self.module->entry()->num_parameters(); ++i) {
               out.append(Describe(*self.module, *self.module->entry()->parameter(i)));
             }
             return out;
           })
      .def("result",
           [](const ModuleHandle& self) {
             return Describe(*self.module, *self.module->entry()->root());
           })
      .def("set_mesh",
           [](ModuleHandle& self, const std::string& mesh) {
             absl::Status set = driver::SetModuleMesh(*self.module, mesh);
             if (!set.ok()) throw py::value_error(std::string(set.message()));
           })
      .def("set_parameter_sharding",
           [](ModuleHandle& self, int64_t index, const std::string& sharding) {
             hlo::Instruction& parameter = ParameterAt(self, index);
             SetSharding(*self.module, parameter, sharding,
                         absl::StrCat("parameter ", index, " (%", parameter.name(), ": ",
                                      parameter.shape().ToString(), ")"));
           })
      .def("set_value_sharding",
           [](ModuleHandle& self, const std::string& name, const std::string& sharding) {
             hlo::Instruction* value = self.module->entry()->FindInstruction(name);
             if (value == nullptr) {
               throw py::key_error(absl::StrCat("the entry computation has no value named %",
                                                name));
             }
             SetSharding(*self.module, *value, sharding,
                         absl::StrCat("%", value->name(), " (", value->shape().ToString(), ")"));
           })
      .def("set_result_sharding",
           [](ModuleHandle& self, const std::string& sharding) {
             hlo::Instruction& root = *self.module->entry()->root();
             SetSharding(*self.module, root, sharding,
                         absl::StrCat("the root %", root.name(), " (", root.shape().ToString(),
                                      ")"));
           })
      .def("propagate", &Propagate, py::arg("devices"), py::arg("mesh"),
           py::arg("mapreduce_mode"))
      .def("explain", &Explain, py::arg("name"), py::arg("devices"), py::arg("mesh"),
           py::arg("mapreduce_mode"))
      .def("partition", &Partition, py::arg("devices"), py::arg("mesh"),
           py::arg("mapreduce_mode"), py::arg("propagate"), py::arg("stop_after"))
      .def("grad",
           [](const ModuleHandle& self, std::vector<int64_t> wrt) {
             return Transform(self, [wrt](const hlo::Module& m) {
               return autodiff::GradModule(m, wrt);
             });
           },
           py::arg("wrt"))
      .def("jvp",
           [](const ModuleHandle& self) {
             return Transform(self, [](const hlo::Module& m) { return autodiff::JvpModule(m); });
           })
      .def("transpose",
           [](const ModuleHandle& self, int64_t num_linear) {
             return Transform(self, [num_linear](const hlo::Module& m) {
               return autodiff::TransposeModule(m, num_linear);
             });
           },
           py::arg("num_linear"))
      .def("compare", &Compare, py::arg("devices"), py::arg("mesh"));
}

}  // namespace sharc::python
