// A user's module compiled for running, as the embedding APIs (C and
// Python) ask for it: resolve the device count from the request or the
// module, prepare a copy (mesh, MapReduce and shard_map lowering), verify it
// for that device count, and compile it into a CompiledProgram while
// collecting the notes compiling has for the user.
//
//   RunRequest request;
//   request.num_devices = 2;
//   ASSIGN_OR_RETURN(CompiledForRun program, CompileForRun(module, request));
//   program.compiled->Run(args);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pipeline.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/mesh.h"
#include "driver/compiled_program.h"

namespace sharc::driver {

struct RunRequest {
  // Overrides the module's mesh (and so its device count).
  std::optional<spmd::Mesh> mesh;
  // Overrides the device count; must agree with `mesh` when both are set.
  std::optional<int64_t> num_devices;
  spmd::MapReduceMode mapreduce_mode = spmd::MapReduceMode::kAnnotated;
  Backend backend = Backend::kDefault;
  double collective_timeout_seconds = 60;
  // Verifying, dumping around the compiler's passes (hlo/passes/pipeline.h).
  hlo::PipelineOptions pipeline = hlo::DefaultPipelineOptions();
  // Time every compiler pass (`--pass-timings`): CompiledForRun::pass_timings.
  bool pass_timings = false;
};

struct CompiledForRun {
  // The module as compiled: request applied, MapReduce blocks and
  // shard_maps lowered.
  std::unique_ptr<hlo::Module> prepared;
  std::unique_ptr<CompiledProgram> compiled;
  // Notes for the user from compiling (e.g. why the interpreter runs);
  // one per line.
  std::string notes;
  // With RunRequest::pass_timings, each pass's wall time in the report
  // `--pass-timings` prints (hlo/passes/pass_timings.h); else empty.
  std::string pass_timings;
};

// Compiles a copy of `module`. Without an override the module's own
// num_partitions counts (a module annotated for 2 devices compiles for 2,
// where `sharc run` defaults to 1). Fails under mpirun: embedding APIs run
// their devices in-process only.
absl::StatusOr<CompiledForRun> CompileForRun(const hlo::Module& module, const RunRequest& request);

}  // namespace sharc::driver
