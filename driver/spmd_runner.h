// Runs a global (annotated) module on N devices: sharding propagation, SPMD
// partitioning, splitting the global inputs by the entry parameters'
// shardings, running the per-device program on the runtime's device mesh,
// and reassembling the global result. This is `sharc run --devices N`.
// Under `mpirun -np R` the N devices are spread over the R processes (N/R
// each, MPI between them); process 0 alone takes the inputs and gets the
// result, exactly as a single-process run does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pipeline.h"
#include "driver/compiled_program.h"

namespace sharc::driver {

struct PartitionedRunOptions {
  int64_t num_devices = 1;
  // A collective (or, under MPI, any exchange between processes) whose
  // peers do not all arrive within this time fails the run.
  absl::Duration collective_timeout = absl::Seconds(60);
  // Kernels of the per-device program: the reference interpreter's unless
  // asked for (Halide compiles every kernel first, which tests and the
  // frontend's small programs do not want by default).
  Backend backend = Backend::kInterpreter;
  bool show_progress = false;
  std::function<void(std::string_view)> note;
  // After the run, run the executable this many more times (in-process
  // mesh only) and append each run's wall time, compilation excluded.
  int64_t timed_iterations = 0;
  std::vector<double>* run_seconds = nullptr;
  // Then profile this many runs (driver/profile.h) into `profile`.
  int64_t profiled_iterations = 0;
  Profile* profile = nullptr;
  // Verifying, dumping around the compiler's passes (hlo/passes/pipeline.h).
  hlo::PipelineOptions pipeline = hlo::DefaultPipelineOptions();
  // The host's side of infeeds and outfeeds (driver/host_transfers.h).
  HostTransfers* host = nullptr;
};

// True when this process was started by mpirun as one of several
// (OMPI_COMM_WORLD_SIZE > 1). Plain `sharc run` never needs MPI.
bool LaunchedByMpirun();
// False only for the MPI processes other than the first: they neither read
// inputs nor print or write results.
bool IsMainProcess();
// "an in-process device mesh" or "2 MPI processes (2 devices each)", for
// the user's note.
std::string DescribeDeviceMesh(int64_t num_devices);

// Compiles `global` (driver/compiled_program.h) and runs it once, plus
// `timed_iterations` timed runs. `global` must be verified. Compile errors (propagation, partitioning,
// inputs that do not fit the shardings) come back as InvalidArgument or
// whatever the pass returned; run failures are wrapped as Aborted so the
// caller can tell them apart. Under mpirun, `args` are used only on the
// main process (the others pass none) and only it gets the result; the
// others get an empty literal.
absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            const PartitionedRunOptions& options);
absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            int64_t num_devices);

}  // namespace sharc::driver
