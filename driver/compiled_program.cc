#include "driver/compiled_program.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "codegen/halide_kernel_factory.h"
#include "codegen/kernel_compiler.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/verifier/verifier.h"
#include "runtime/interpreter_kernels.h"
#include "runtime/kernel_loop_pool.h"
#include "runtime/mesh_runtime.h"
#include "spmd/partition/device_values.h"
#include "spmd/sharding_util.h"
#include "driver/compiler_passes.h"
#include "driver/device_arguments.h"
#include "driver/mpi_program_run.h"
#include "driver/spmd_runner.h"

namespace sharc::driver {
namespace {

absl::Status Prefix(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

absl::Status RunFailed(int64_t num_devices, const absl::Status& status) {
  if (num_devices == 1) {
    // The device mesh names the failing device; alone, it adds nothing.
    return absl::AbortedError(absl::StrCat(
        "the run failed: ", absl::StripPrefix(status.message(), "device 0 failed: ")));
  }
  return absl::AbortedError(
      absl::StrCat("running on ", num_devices, " devices failed: ", status.message()));
}

// Kernels from the Halide backend, or from the interpreter once the
// per-device program turns out to have an op Halide cannot run: for that
// op alone where the interpreter can run it between Halide kernels (mixed),
// else for every op.
class BackendKernelFactory final : public runtime::KernelFactory {
 public:
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> MakeKernel(
      const hlo::Instruction& instruction) override {
    if (mixed_ && codegen::InterpretedByFallback(instruction)) {
      return interpreter_.MakeKernel(instruction);
    }
    return delegate_->MakeKernel(instruction);
  }
  absl::StatusOr<std::unique_ptr<runtime::Kernel>> MakeCallKernel(
      const hlo::Instruction& call) override {
    return delegate_->MakeCallKernel(call);
  }
  void UseInterpreter() { delegate_ = &interpreter_; }
  void InterpretUnlowerable() { mixed_ = true; }
  bool uses_halide() const { return delegate_ == &halide_; }

 private:
  bool mixed_ = false;
  codegen::HalideKernelFactory halide_;
  runtime::InterpreterKernelFactory interpreter_;
  runtime::KernelFactory* delegate_ = &halide_;
};

}  // namespace

absl::StatusOr<Backend> ParseBackend(std::string_view name) {
  if (name.empty()) return Backend::kDefault;
  if (name == "halide") return Backend::kHalide;
  if (name == "interpreter") return Backend::kInterpreter;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", std::string(name), "' (available: halide, interpreter)"));
}

// What runs: the executable over a device mesh that stays up between runs,
// or, for programs the runtime cannot schedule (a collective with a
// non-elementary reducer), the interpreter's own SPMD mode.
struct CompiledProgram::Engine {
  BackendKernelFactory factory;
  std::unique_ptr<runtime::Executable> executable;
  std::unique_ptr<runtime::DeviceMesh> mesh;
};

CompiledProgram::~CompiledProgram() = default;

absl::StatusOr<std::unique_ptr<CompiledProgram>> CompiledProgram::Compile(
    const hlo::Module& global, const ProgramOptions& options) {
  if (options.num_devices < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the device count must be at least 1, got ", options.num_devices));
  }
  std::unique_ptr<CompiledProgram> program(new CompiledProgram());
  program->options_ = options;
  program->engine_ = std::make_unique<Engine>();
  const bool partition = options.num_devices > 1 || LaunchedByMpirun();
  program->partitioned_ = partition;

  // The passes of driver/compiler_passes.h, a stage at a time: propagation
  // works in place on a copy (the caller's module stays as written), the
  // partitioner on another, and kernels are prepared on a third once the
  // backend is chosen.
  CompilerSpec spec;
  spec.partition.num_devices = options.num_devices;
  spec.precompile.show_progress = options.show_progress;
  auto run_stage = [&](Stage stage, hlo::Module& module) {
    return CompilerPipeline(spec, stage, stage, options.pipeline).Run(module);
  };
  program->propagated_ = global.Clone();
  if (partition) {
    if (absl::Status st = run_stage(Stage::kPropagate, *program->propagated_); !st.ok()) {
      return Prefix(st, "sharding propagation failed");
    }
    std::unique_ptr<hlo::Module> local = program->propagated_->Clone();
    if (absl::Status st = run_stage(Stage::kPartition, *local); !st.ok()) {
      return Prefix(st, "partitioning failed");
    }
    // A partitioner bug should surface as a clear compile error, not as a
    // confusing failure inside a kernel.
    if (absl::Status verified = hlo::VerifyModule(*local); !verified.ok()) {
      return absl::InternalError(
          absl::StrCat("the partitioned module does not verify: ", verified.message()));
    }
    program->per_device_ = std::move(local);
  } else {
    program->per_device_ = global.Clone();
  }

  // Halide support is decided on the per-device program (partitioning
  // removes sharding custom-calls, for one).
  Engine& engine = *program->engine_;
  std::unique_ptr<hlo::Module> runnable = program->per_device_->Clone();
  if (options.backend == Backend::kInterpreter) {
    engine.factory.UseInterpreter();
  } else if (absl::Status st = codegen::CheckHalideSupports(*runnable); !st.ok()) {
    if (options.backend == Backend::kHalide) {
      return absl::InvalidArgumentError(absl::StrCat("--backend halide: ", st.message()));
    }
    if (codegen::CheckHalideSupports(*runnable, /*interpret_unlowerable=*/true).ok()) {
      // Mixed: the ops Halide cannot lower run on the interpreter's kernel,
      // one instruction each, the rest on Halide kernels.
      if (options.note) {
        options.note(absl::StrCat("running ",
                                  codegen::InterpretedInstructions(*runnable).size(),
                                  " instruction(s) on the interpreter's kernels, the rest on "
                                  "Halide kernels: ", st.message()));
      }
      engine.factory.InterpretUnlowerable();
      spec.precompile.interpret_unlowerable = true;
      RETURN_IF_ERROR(run_stage(Stage::kKernels, *runnable));
    } else {
      if (options.note) options.note(absl::StrCat("running with the interpreter: ", st.message()));
      engine.factory.UseInterpreter();
    }
  } else {
    RETURN_IF_ERROR(run_stage(Stage::kKernels, *runnable));
  }
  program->uses_halide_ = engine.factory.uses_halide();

  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      runtime::Executable::Create(*runnable, engine.factory);
  if (executable.ok()) {
    engine.executable = *std::move(executable);
  } else if (!absl::IsUnimplemented(executable.status()) || LaunchedByMpirun()) {
    return Prefix(executable.status(), "building the per-device executable");
  }
  if (engine.executable != nullptr && !LaunchedByMpirun()) {
    runtime::MeshOptions mesh_options;
    mesh_options.num_devices = options.num_devices;
    mesh_options.collective_timeout = options.collective_timeout;
    engine.mesh = std::make_unique<runtime::DeviceMesh>(mesh_options);
  }
  return program;
}

absl::StatusOr<std::vector<std::vector<runtime::Buffer>>> CompiledProgram::SplitArguments(
    const std::vector<hlo::Literal>& args) const {
  const hlo::Computation& entry = *propagated_->entry();
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the program takes ", entry.num_parameters(), " arguments, got ", args.size()));
  }
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Instruction& parameter = *entry.parameter(i);
    if (!(args[static_cast<size_t>(i)].shape() == parameter.shape())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " (%", parameter.name(), ") is ", args[static_cast<size_t>(i)].shape().ToString(),
          " but the program takes ", parameter.shape().ToString()));
    }
  }
  std::vector<std::vector<runtime::Buffer>> device_args;
  if (!partitioned_) {
    std::vector<runtime::Buffer> buffers;
    for (const hlo::Literal& a : args) {
      ASSIGN_OR_RETURN(runtime::Buffer b, runtime::Buffer::FromLiteral(a));
      buffers.push_back(std::move(b));
    }
    device_args.push_back(std::move(buffers));
    return device_args;
  }
  for (int64_t d = 0; d < options_.num_devices; ++d) {
    ASSIGN_OR_RETURN(std::vector<runtime::Buffer> a, DeviceArgumentBuffers(entry, args, d));
    device_args.push_back(std::move(a));
  }
  return device_args;
}

absl::StatusOr<hlo::Literal> CompiledProgram::Run(const std::vector<hlo::Literal>& args,
                                                  HostTransfers* host) {
  const int64_t n = options_.num_devices;
  const hlo::Computation& entry = *propagated_->entry();
  std::vector<hlo::Literal> parts;
  // One device of the global program, or the partitioned program's devices.
  std::vector<std::unique_ptr<hlo::HostQueues>> queues =
      MakeDeviceQueues(partitioned_ ? n : 1, host != nullptr ? host->infeed : nullptr);
  if (LaunchedByMpirun() && UsesHostQueues(*per_device_)) {
    return absl::UnimplementedError(
        "infeed and outfeed under mpirun: only process 0 has the host's values; run the "
        "devices in one process");
  }
  if (LaunchedByMpirun()) {
    absl::StatusOr<std::vector<hlo::Literal>> gathered =
        RunOnMpiProcesses(*per_device_, entry, args, *engine_->executable, n,
                          options_.collective_timeout);
    if (!gathered.ok()) {
      // Bad flags stay input errors; anything else failed the run.
      if (absl::IsAborted(gathered.status()) || absl::IsInvalidArgument(gathered.status())) {
        return gathered.status();
      }
      return RunFailed(n, gathered.status());
    }
    if (!IsMainProcess()) return hlo::Literal();
    parts = *std::move(gathered);
  } else if (engine_->executable != nullptr) {
    ASSIGN_OR_RETURN(std::vector<std::vector<runtime::Buffer>> device_args, SplitArguments(args));
    last_stats_.clear();
    engine_->mesh->set_host_queues(Pointers(queues));
    absl::StatusOr<std::vector<runtime::Buffer>> outputs =
        engine_->mesh->RunBuffers(*engine_->executable, device_args, &last_stats_);
    engine_->mesh->set_host_queues({});
    if (!outputs.ok()) return RunFailed(n, outputs.status());
    for (const runtime::Buffer& b : *outputs) {
      ASSIGN_OR_RETURN(hlo::Literal l, DeviceResultLiteral(b));
      parts.push_back(std::move(l));
    }
  } else if (!partitioned_) {
    absl::StatusOr<hlo::Literal> evaluated = hlo::Evaluate(*per_device_, args, queues[0].get());
    if (!evaluated.ok()) return RunFailed(n, evaluated.status());
    parts.push_back(*std::move(evaluated));
  } else {
    std::vector<std::vector<hlo::Literal>> device_args(static_cast<size_t>(n));
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      const hlo::Sharding sharding = spmd::ShardingOrReplicated(*entry.parameter(i));
      for (int64_t d = 0; d < n; ++d) {
        absl::StatusOr<hlo::Literal> part =
            spmd::ShardLiteral(args[static_cast<size_t>(i)], sharding, d);
        if (!part.ok()) {
          return Prefix(part.status(), absl::StrCat("splitting parameter ", i, " for device ", d));
        }
        device_args[static_cast<size_t>(d)].push_back(*std::move(part));
      }
    }
    hlo::SpmdOptions spmd_options;
    spmd_options.num_devices = n;
    spmd_options.collective_timeout = options_.collective_timeout;
    spmd_options.host_queues = Pointers(queues);
    absl::StatusOr<std::vector<hlo::Literal>> evaluated =
        hlo::EvaluateSpmd(*per_device_, device_args, spmd_options);
    if (!evaluated.ok()) return RunFailed(n, evaluated.status());
    parts = *std::move(evaluated);
  }
  if (host != nullptr) {
    absl::StatusOr<std::vector<hlo::Literal>> outfed = GlobalOutfeed(queues);
    if (!outfed.ok()) return Prefix(outfed.status(), "assembling the outfeed");
    host->outfeed = *std::move(outfed);
  }
  const hlo::Instruction& root = *entry.root();
  if (!partitioned_) return std::move(parts[0]);
  absl::StatusOr<hlo::Literal> assembled =
      spmd::AssembleLiteral(parts, spmd::ShardingOrReplicated(root), root.shape());
  if (!assembled.ok()) return Prefix(assembled.status(), "assembling the result");
  return assembled;
}

bool CompiledProgram::runs_on_buffers() const {
  return !partitioned_ && engine_->executable != nullptr && !LaunchedByMpirun();
}

absl::StatusOr<runtime::Buffer> CompiledProgram::RunOnBuffers(std::vector<runtime::Buffer> args) {
  if (!runs_on_buffers()) {
    return absl::FailedPreconditionError(
        "RunOnBuffers needs a program compiled for one device with kernels in this process");
  }
  const hlo::Computation& entry = *per_device_->entry();
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the program takes ", entry.num_parameters(), " arguments, got ", args.size()));
  }
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Shape& want = entry.parameter(i)->shape();
    if (!(args[static_cast<size_t>(i)].shape() == want)) {
      return absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " is ", args[static_cast<size_t>(i)].shape().ToString(),
                       " but the program takes ", want.ToString()));
    }
  }
  std::vector<std::vector<runtime::Buffer>> device_args;
  device_args.push_back(std::move(args));
  last_stats_.clear();
  absl::StatusOr<std::vector<runtime::Buffer>> outputs =
      engine_->mesh->RunBuffers(*engine_->executable, device_args, &last_stats_);
  if (!outputs.ok()) return RunFailed(1, outputs.status());
  return std::move((*outputs)[0]);
}

namespace {

// Timed and profiled runs have no host to feed or drain the queues.
absl::Status RefuseHostQueues(const hlo::Module& module, absl::string_view what) {
  if (!UsesHostQueues(module)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      what, " runs the program again without a host, and this one has an infeed or outfeed"));
}

}  // namespace

absl::StatusOr<std::vector<double>> CompiledProgram::TimeRuns(
    const std::vector<hlo::Literal>& args, int64_t iterations) {
  RETURN_IF_ERROR(RefuseHostQueues(*per_device_, "timing (--iterations)"));
  std::vector<double> seconds;
  if (engine_->executable == nullptr || LaunchedByMpirun()) {
    // Nothing stays compiled in the interpreter's own modes: time whole runs.
    for (int64_t i = 0; i < iterations; ++i) {
      const absl::Time start = absl::Now();
      ASSIGN_OR_RETURN(hlo::Literal again, Run(args));
      seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
    }
    return seconds;
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<runtime::Buffer>> device_args, SplitArguments(args));
  for (int64_t i = 0; i < iterations; ++i) {
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<runtime::Buffer>> again =
        engine_->mesh->RunBuffers(*engine_->executable, device_args);
    if (!again.ok()) return RunFailed(options_.num_devices, again.status());
    seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
  }
  return seconds;
}

absl::StatusOr<Profile> CompiledProgram::ProfileRuns(const std::vector<hlo::Literal>& args,
                                                     int64_t iterations) {
  if (engine_->executable == nullptr || LaunchedByMpirun()) {
    return absl::FailedPreconditionError(
        "profiling needs the in-process device mesh; this program runs in the interpreter's "
        "own SPMD mode or under mpirun");
  }
  if (iterations < 1) return absl::InvalidArgumentError("profiling needs at least one run");
  RETURN_IF_ERROR(RefuseHostQueues(*per_device_, "profiling"));
  ASSIGN_OR_RETURN(std::vector<std::vector<runtime::Buffer>> device_args, SplitArguments(args));
  // Every thread the program's kernels and devices may use.
  int64_t per_device = engine_->mesh->threads_per_device();
  if (runtime::KernelLoopThreadCap() > 0) {
    per_device = std::min<int64_t>(per_device, runtime::KernelLoopThreadCap());
  }
  const int64_t threads = std::min<int64_t>(std::max(1u, std::thread::hardware_concurrency()),
                                            options_.num_devices * per_device);
  const runtime::MachineLimits limits = runtime::MeasuredMachineLimits(
      static_cast<int>(threads), codegen::KernelCompiler::Global().cache_dir());
  // One run first, untimed: a program's first run takes its buffers from
  // the system, faulting in fresh pages (with transparent huge pages, by
  // compacting memory), which the runs after it reuse from the pool. On
  // the medium training step that first run's 8 MiB elementwise kernels
  // took 2-23 ms against 1.2-1.4 warm, so counted in the means it made
  // whole processes' profiles 15-25% slower than the benchmark's step.
  std::vector<runtime::ExecutionStats> warm_up_stats;
  if (absl::StatusOr<std::vector<runtime::Buffer>> warm_up =
          engine_->mesh->RunBuffers(*engine_->executable, device_args, &warm_up_stats);
      !warm_up.ok()) {
    return RunFailed(options_.num_devices, warm_up.status());
  }
  std::vector<std::vector<std::vector<runtime::StepEvent>>> events;
  std::vector<double> seconds;
  engine_->mesh->set_profiling(true);
  absl::Status failed;
  for (int64_t i = 0; i < iterations && failed.ok(); ++i) {
    std::vector<runtime::ExecutionStats> stats;
    const absl::Time start = absl::Now();
    absl::StatusOr<std::vector<runtime::Buffer>> outputs =
        engine_->mesh->RunBuffers(*engine_->executable, device_args, &stats);
    seconds.push_back(absl::ToDoubleSeconds(absl::Now() - start));
    if (!outputs.ok()) {
      failed = RunFailed(options_.num_devices, outputs.status());
      break;
    }
    std::vector<std::vector<runtime::StepEvent>>& run = events.emplace_back();
    for (runtime::ExecutionStats& s : stats) run.push_back(std::move(s.events));
  }
  engine_->mesh->set_profiling(false);
  RETURN_IF_ERROR(failed);
  return BuildProfile(events, seconds, options_.num_devices, limits);
}

absl::StatusOr<spmd::CostReport> CompiledProgram::Report(int top_buffers) const {
  return spmd::AnalyzeCost(*per_device_, propagated_.get(), top_buffers);
}

}  // namespace sharc::driver
