// sharc._sharc.compile and _Executable: a module compiled once for a mesh
// (driver::CompileForRun, the engine of `sharc run`, jit and the C API) and
// run many times on NumPy arrays. Compiling can be interrupted with Ctrl-C;
// neither compiling nor running holds the GIL.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "arrays.h"
#include "errors.h"
#include "interruptible.h"
#include "module_handle.h"
#include "driver/compile_for_run.h"

namespace sharc::python {
namespace {

namespace py = pybind11;

struct ExecutableHandle {
  driver::CompiledForRun program;
  // CompiledProgram::Run must not run twice at once; Python threads may
  // share an executable, so runs take turns here.
  std::unique_ptr<std::mutex> run_mutex = std::make_unique<std::mutex>();
};

std::shared_ptr<ExecutableHandle> Compile(const ModuleHandle& module,
                                          std::optional<int64_t> devices,
                                          std::optional<std::string> mesh,
                                          const std::string& backend,
                                          const std::string& mapreduce_mode,
                                          double collective_timeout, bool pass_timings) {
  driver::RunRequest request;
  if (devices) {
    if (*devices < 1) throw py::value_error(absl::StrCat("devices must be at least 1, got ", *devices));
    request.num_devices = *devices;
  }
  if (mesh) {
    absl::StatusOr<spmd::Mesh> parsed = spmd::Mesh::Parse(*mesh);
    if (!parsed.ok()) {
      throw py::value_error(absl::StrCat("mesh '", *mesh, "': ", parsed.status().message()));
    }
    request.mesh = *parsed;
  }
  absl::StatusOr<driver::Backend> parsed_backend =
      driver::ParseBackend(backend == "default" ? "" : backend);
  if (!parsed_backend.ok()) {
    throw py::value_error(absl::StrCat("backend must be \"halide\", \"interpreter\" or "
                                       "\"default\", got \"", backend, "\""));
  }
  request.backend = *parsed_backend;
  absl::StatusOr<spmd::MapReduceMode> mode = spmd::ParseMapReduceMode(mapreduce_mode);
  if (!mode.ok()) throw py::value_error(absl::StrCat("mapreduce_mode: ", mode.status().message()));
  request.mapreduce_mode = *mode;
  if (!(collective_timeout > 0)) {
    throw py::value_error("collective_timeout must be a positive number of seconds");
  }
  request.collective_timeout_seconds = collective_timeout;
  request.pass_timings = pass_timings;
  // The worker owns its copy of the module and of the result, so an
  // interrupted compile can finish alone.
  auto global = std::shared_ptr<const hlo::Module>(module.module->Clone());
  auto handle = std::make_shared<ExecutableHandle>();
  absl::Status compiled = RunInterruptibly([global, request, handle]() -> absl::Status {
    absl::StatusOr<driver::CompiledForRun> program = driver::CompileForRun(*global, request);
    if (!program.ok()) return program.status();
    handle->program = *std::move(program);
    return absl::OkStatus();
  });
  ThrowIfError(compiled, Stage::kPartition);
  return handle;
}

const hlo::Computation& Entry(const ExecutableHandle& self) {
  return *self.program.prepared->entry();
}

std::vector<py::array> CheckedArguments(const ExecutableHandle& self, const py::sequence& args) {
  const hlo::Computation& entry = Entry(self);
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    throw py::type_error(absl::StrCat("the program takes ", entry.num_parameters(),
                                      " argument(s), one per entry parameter, but ", args.size(),
                                      " were given"));
  }
  std::vector<py::array> arrays;
  arrays.reserve(args.size());
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    arrays.push_back(CheckedArgument(args[static_cast<size_t>(i)], *entry.parameter(i), i));
  }
  return arrays;
}

std::vector<hlo::Literal> Arguments(const ExecutableHandle& self, const py::sequence& args) {
  std::vector<py::array> arrays = CheckedArguments(self, args);
  std::vector<hlo::Literal> literals;
  literals.reserve(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    literals.push_back(ArgumentLiteral(arrays[i], Entry(self).parameter(i)->shape()));
  }
  return literals;
}

// On one device the kernels read the NumPy arrays' memory and the result
// is handed back without copies; a partitioned run splits the inputs and
// assembles the result, through literals.
py::object Call(ExecutableHandle& self, const py::args& args) {
  driver::CompiledProgram& program = *self.program.compiled;
  if (program.runs_on_buffers()) {
    std::vector<py::array> arrays = CheckedArguments(self, args);
    std::vector<runtime::Buffer> buffers;
    buffers.reserve(arrays.size());
    for (size_t i = 0; i < arrays.size(); ++i) {
      buffers.push_back(BorrowedArgument(arrays[i], Entry(self).parameter(i)->shape()));
    }
    absl::StatusOr<runtime::Buffer> result;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(*self.run_mutex);
      result = program.RunOnBuffers(std::move(buffers));
    }
    return ToPython(ValueOrThrow(std::move(result), Stage::kRun), arrays);
  }
  std::vector<hlo::Literal> literals = Arguments(self, args);
  absl::StatusOr<hlo::Literal> result;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*self.run_mutex);
    result = program.Run(literals);
  }
  return ToPython(ValueOrThrow(std::move(result), Stage::kRun));
}

std::vector<double> Time(ExecutableHandle& self, const py::sequence& args, int64_t iterations) {
  if (iterations < 1) throw py::value_error("iterations must be at least 1");
  std::vector<hlo::Literal> literals = Arguments(self, args);
  absl::StatusOr<std::vector<double>> seconds;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*self.run_mutex);
    seconds = self.program.compiled->TimeRuns(literals, iterations);
  }
  return ValueOrThrow(std::move(seconds), Stage::kRun);
}

// The profile as (JSON, text, Chrome trace).
py::tuple ProfileRuns(ExecutableHandle& self, const py::sequence& args, int64_t iterations) {
  if (iterations < 1) throw py::value_error("iterations must be at least 1");
  std::vector<hlo::Literal> literals = Arguments(self, args);
  absl::StatusOr<driver::Profile> profile;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*self.run_mutex);
    profile = self.program.compiled->ProfileRuns(literals, iterations);
  }
  driver::Profile p = ValueOrThrow(std::move(profile), Stage::kRun);
  return py::make_tuple(p.ToJson(), p.ToText(), p.ToChromeTrace());
}

std::string Report(ExecutableHandle& self) {
  absl::StatusOr<spmd::CostReport> report;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(*self.run_mutex);
    report = self.program.compiled->Report();
  }
  return ValueOrThrow(std::move(report), Stage::kPartition).ToJson();
}

py::list LastRunStats(ExecutableHandle& self) {
  std::lock_guard<std::mutex> lock(*self.run_mutex);
  py::list out;
  for (const runtime::ExecutionStats& stats : self.program.compiled->last_run_stats()) {
    py::dict d;
    d["kernel_launches"] = stats.kernel_launches;
    d["collectives"] = stats.collectives;
    d["peak_live_bytes"] = stats.peak_live_bytes;
    out.append(d);
  }
  return out;
}

std::string Text(const ExecutableHandle& self, const std::string& stage) {
  if (stage == "prepared") return self.program.prepared->ToString();
  if (stage == "propagated") return self.program.compiled->propagated().ToString();
  if (stage == "per_device") return self.program.compiled->per_device().ToString();
  throw py::value_error(absl::StrCat("stage must be \"prepared\", \"propagated\" or "
                                     "\"per_device\", got \"", stage, "\""));
}

}  // namespace

void RegisterExecutable(py::module_& m) {
  m.def("compile", &Compile, py::arg("module"), py::arg("devices"), py::arg("mesh"),
        py::arg("backend"), py::arg("mapreduce_mode"), py::arg("collective_timeout"),
        py::arg("pass_timings") = false);
  m.def("_wait_for_abandoned_work", &WaitForAbandonedWork);
  py::class_<ExecutableHandle, std::shared_ptr<ExecutableHandle>>(m, "_Executable")
      .def("__call__", &Call)
      .def("time", &Time, py::arg("args"), py::arg("iterations"))
      .def("report", &Report)
      .def("profile", &ProfileRuns, py::arg("args"), py::arg("iterations"))
      .def("last_run_stats", &LastRunStats)
      .def("text", &Text, py::arg("stage"))
      .def_property_readonly(
          "pass_timings",
          [](const ExecutableHandle& self) { return self.program.pass_timings; })
      .def("parameters",
           [](const ExecutableHandle& self) {
             py::list out;
             for (int64_t i = 0; i < Entry(self).num_parameters(); ++i) {
               out.append(Describe(*self.program.prepared, *Entry(self).parameter(i)));
             }
             return out;
           })
      .def_property_readonly("num_devices",
                             [](const ExecutableHandle& self) {
                               return self.program.compiled->num_devices();
                             })
      .def_property_readonly("uses_halide",
                             [](const ExecutableHandle& self) {
                               return self.program.compiled->uses_halide();
                             })
      .def_property_readonly("notes",
                             [](const ExecutableHandle& self) { return self.program.notes; });
}

}  // namespace sharc::python
