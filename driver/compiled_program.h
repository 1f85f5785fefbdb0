// A global program compiled once for a device count and run many times:
// sharding propagation, SPMD partitioning, fusion and Halide kernels (or the
// reference interpreter's) -- the passes of driver/compiler_passes.h -- and
// a device mesh that stays up between runs.
// `sharc run`, the frontend's jit and the C API all run programs through
// this, so they agree on what a compiled program is and pay the compile
// once.
//
//   ProgramOptions options;
//   options.num_devices = 4;
//   auto program = CompiledProgram::Compile(module, options);   // prepared module
//   auto result = (*program)->Run(args);                         // global literals in and out
//   auto report = (*program)->Report();                          // per-device costs
//
// Under `mpirun -np R` every process compiles the same program and Run
// spreads the devices over the processes (process 0 alone passes the inputs
// and gets the result), exactly as RunPartitioned does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pipeline.h"
#include "runtime/executable.h"
#include "spmd/cost_report.h"
#include "driver/host_transfers.h"
#include "driver/profile.h"

namespace sharc::driver {

enum class Backend {
  // Halide kernels; the interpreter's when Halide cannot run the per-device
  // program (with a note saying why).
  kDefault,
  // Halide kernels or an error naming the op Halide cannot run.
  kHalide,
  // The reference interpreter's kernels.
  kInterpreter,
};

// "halide" / "interpreter" (and "" for kDefault) as the CLI spells them.
absl::StatusOr<Backend> ParseBackend(std::string_view name);

struct ProgramOptions {
  // Devices to partition for; 1 runs the global program as written.
  int64_t num_devices = 1;
  Backend backend = Backend::kDefault;
  // A collective (or, under MPI, any exchange between processes) whose
  // peers do not all arrive within this time fails the run.
  absl::Duration collective_timeout = absl::Seconds(60);
  // Show kernel compilation progress on a terminal.
  bool show_progress = false;
  // Receives notes for the user (the interpreter fallback); none if unset.
  std::function<void(std::string_view)> note;
  // Verifying, dumping around the compiler's passes (hlo/passes/pipeline.h).
  hlo::PipelineOptions pipeline = hlo::DefaultPipelineOptions();
};

class CompiledProgram {
 public:
  // Compiles `global`, a verified module whose MapReduce blocks and
  // shard_maps are already lowered (driver::PrepareModule). Compile errors
  // (propagation, partitioning, kernels) come back as InvalidArgument or
  // whatever the pass returned; a per-device program that does not verify
  // is Internal.
  static absl::StatusOr<std::unique_ptr<CompiledProgram>> Compile(const hlo::Module& global,
                                                                  const ProgramOptions& options);
  ~CompiledProgram();

  // Runs on the global arguments (split by the entry parameters'
  // shardings) and returns the assembled global result. Run failures are
  // Aborted; inputs that do not fit are InvalidArgument. Under mpirun the
  // processes other than the first pass no arguments and get an empty
  // literal. Not safe to call from two threads at once. The program's
  // infeeds read `host->infeed` and its outfeeds' global values land in
  // `host->outfeed` (driver/host_transfers.h); without `host` an infeed
  // finds its queue empty and outfed values are dropped.
  absl::StatusOr<hlo::Literal> Run(const std::vector<hlo::Literal>& args,
                                   HostTransfers* host = nullptr);

  // True when the program runs on one device of this process with compiled
  // kernels, so that RunOnBuffers can take the caller's memory as it is.
  bool runs_on_buffers() const;
  // Runs on the entry arguments as buffers (which may alias the caller's
  // memory: runtime::Buffer::Borrow) and returns the root's buffer, which
  // may alias an argument. Only when runs_on_buffers(); shapes must match.
  absl::StatusOr<runtime::Buffer> RunOnBuffers(std::vector<runtime::Buffer> args);

  // Runs the compiled program `iterations` more times on `args` (split once)
  // and returns each run's wall time in seconds: the executable alone, with
  // neither compilation nor splitting and assembling counted.
  absl::StatusOr<std::vector<double>> TimeRuns(const std::vector<hlo::Literal>& args,
                                               int64_t iterations);

  // Runs once untimed (the first run faults in its buffers), then
  // `iterations` times with every kernel and collective timed, and
  // returns where the time went (driver/profile.h). Needs the in-process
  // mesh (compiled kernels or the interpreter's; not under mpirun).
  absl::StatusOr<Profile> ProfileRuns(const std::vector<hlo::Literal>& args, int64_t iterations);

  // Per device, as the runtime measured them in the last Run (in-process
  // meshes only; empty before the first run).
  const std::vector<runtime::ExecutionStats>& last_run_stats() const { return last_stats_; }

  int64_t num_devices() const { return options_.num_devices; }
  bool uses_halide() const { return uses_halide_; }
  // The global module after propagation, and the per-device program (before
  // fusion; for one device, the global module).
  const hlo::Module& propagated() const { return *propagated_; }
  const hlo::Module& per_device() const { return *per_device_; }

  // The per-device cost report of the program (spmd/cost_report.h).
  absl::StatusOr<spmd::CostReport> Report(int top_buffers = 8) const;

 private:
  CompiledProgram() = default;
  struct Engine;
  // Every device's entry arguments (the global ones, unsplit, on one device).
  absl::StatusOr<std::vector<std::vector<runtime::Buffer>>> SplitArguments(
      const std::vector<hlo::Literal>& args) const;

  ProgramOptions options_;
  bool uses_halide_ = false;
  bool partitioned_ = false;
  std::unique_ptr<hlo::Module> propagated_;
  std::unique_ptr<hlo::Module> per_device_;
  std::unique_ptr<Engine> engine_;
  std::vector<runtime::ExecutionStats> last_stats_;
};

}  // namespace sharc::driver
