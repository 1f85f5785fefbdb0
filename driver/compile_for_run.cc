#include "driver/compile_for_run.h"

#include <mutex>
#include <utility>

#include "hlo/base/status_macros.h"
#include "hlo/ops/complex_semantics.h"
#include "hlo/ops/narrow_type_semantics.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/verifier/runnable_types.h"
#include "hlo/verifier/verifier.h"
#include "driver/compile_stages.h"
#include "driver/spmd_runner.h"

namespace sharc::driver {
namespace {

absl::StatusOr<CompileOptions> ResolveCompileOptions(const RunRequest& request,
                                                     const hlo::Module& module) {
  CompileOptions resolved;
  resolved.mesh = request.mesh;
  resolved.mapreduce_mode = request.mapreduce_mode;
  resolved.pipeline = request.pipeline;
  if (request.mesh && request.num_devices && *request.num_devices != request.mesh->num_devices()) {
    return absl::InvalidArgumentError(absl::StrCat("the mesh ", request.mesh->ToString(), " has ",
                                                   request.mesh->num_devices(),
                                                   " devices but num_devices is ",
                                                   *request.num_devices));
  }
  resolved.devices = request.num_devices ? *request.num_devices
                     : request.mesh      ? request.mesh->num_devices()
                                         : module.config().num_partitions;
  // With one device the interpreter runs shard_map bodies per mesh device
  // itself, so they stay as written (as in `sharc run`).
  resolved.lower_shard_maps = *resolved.devices > 1;
  return resolved;
}

}  // namespace

absl::StatusOr<CompiledForRun> CompileForRun(const hlo::Module& module, const RunRequest& request) {
  if (LaunchedByMpirun()) {
    return absl::FailedPreconditionError(
        "this process was started by mpirun as one of several; embedded sharc runs its devices "
        "in-process only (use `mpirun ... sharc run` for MPI)");
  }
  // Types that parse but have no storage (f8, s4, complex) stop here, naming
  // the first value that has one.
  CompiledForRun result;
  RunRequest timed = request;
  if (request.pass_timings && timed.pipeline.timings == nullptr) {
    timed.pipeline.timings = std::make_shared<hlo::PassTimings>();
  }
  result.prepared = module.Clone();
  RETURN_IF_ERROR(hlo::LowerForCompute(*result.prepared));
  RETURN_IF_ERROR(hlo::CheckRunnableTypes(*result.prepared));
  ASSIGN_OR_RETURN(CompileOptions compile_options, ResolveCompileOptions(timed, *result.prepared));
  RETURN_IF_ERROR(PrepareModule(*result.prepared, compile_options));
  // The partitioner adds collectives and index arithmetic: complex and
  // narrow values must still meet only ops that compute with them.
  for (const hlo::Computation* computation : result.prepared->computations()) {
    for (const hlo::Instruction* inst : computation->instructions()) {
      RETURN_IF_ERROR(hlo::CheckComplexSupported(*inst));
      RETURN_IF_ERROR(hlo::CheckNarrowTypeSupported(*inst));
    }
  }
  absl::Status verified = hlo::VerifyModule(*result.prepared);
  if (!verified.ok()) {
    return absl::Status(verified.code(),
                        absl::StrCat("the module does not verify for ", *compile_options.devices,
                                     " device(s): ", verified.message()));
  }
  ProgramOptions program_options;
  program_options.num_devices = *compile_options.devices;
  program_options.backend = request.backend;
  program_options.pipeline = timed.pipeline;
  program_options.collective_timeout = absl::Seconds(request.collective_timeout_seconds);
  // Kernel compilation may note from worker threads; the sink closes before
  // the result is handed out, so callers can read the notes without a lock.
  struct NoteSink {
    std::mutex mutex;
    bool open = true;
    std::string notes;
  };
  auto sink = std::make_shared<NoteSink>();
  program_options.note = [sink](std::string_view note) {
    std::lock_guard<std::mutex> lock(sink->mutex);
    if (!sink->open) return;
    if (!sink->notes.empty()) sink->notes.push_back('\n');
    sink->notes.append(note.data(), note.size());
  };
  absl::StatusOr<std::unique_ptr<CompiledProgram>> compiled =
      CompiledProgram::Compile(*result.prepared, program_options);
  {
    std::lock_guard<std::mutex> lock(sink->mutex);
    sink->open = false;
    result.notes = std::move(sink->notes);
  }
  if (!compiled.ok()) return compiled.status();
  result.compiled = *std::move(compiled);
  if (request.pass_timings) result.pass_timings = timed.pipeline.timings->Report();
  return result;
}

}  // namespace sharc::driver
