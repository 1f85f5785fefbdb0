// The compile stages as the subcommands and the embedding APIs use them,
// each a part of the one pass list (driver/compiler_passes.h): prepare a
// module for N devices, propagate, partition. `sharc propagate`,
// `partition`, `report` and `compare` and the Python package all go through
// here so they agree on what a module means.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pipeline.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/mesh.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"

namespace sharc::driver {

// What the compiling subcommands share beyond the module itself.
struct CompileOptions {
  std::optional<int64_t> devices;  // --devices: overrides num_partitions
  std::optional<spmd::Mesh> mesh;  // --mesh: overrides the header's mesh
  spmd::MapReduceMode mapreduce_mode = spmd::MapReduceMode::kAnnotated;  // --mapreduce-mode
  // shard_maps become per-device regions with collectives; a run of the
  // global program on one device keeps them (the interpreter runs their
  // bodies per mesh device itself).
  bool lower_shard_maps = true;
  // --verify-passes, --dump-to, --dump-pass-re.
  hlo::PipelineOptions pipeline = hlo::DefaultPipelineOptions();
};

// Applies the device count and mesh to the module's header, then runs the
// kPrepare passes: lowers its MapReduce blocks (spmd/mapreduce_lowering.h)
// in the chosen mode and its shard_maps (spmd/shard_map_lowering.h).
absl::Status PrepareModule(hlo::Module& module, const CompileOptions& options);

// LoadModule + PrepareModule; the error message is a complete diagnostic.
absl::StatusOr<std::unique_ptr<hlo::Module>> LoadPreparedModule(const std::string& path,
                                                                const CompileOptions& options);

// Applies `--devices N` (overriding the header's num_partitions) and runs
// the propagation stage in place, on a module PrepareModule has prepared
// (every caller does; preparing twice would run the generic passes on what
// the lowerings made, e.g. inline the MapReduce lowering's calls).
absl::StatusOr<spmd::PropagationResult> PropagateModule(
    hlo::Module& module, std::optional<int64_t> devices,
    const hlo::PipelineOptions& pipeline = hlo::DefaultPipelineOptions());

// Propagates `global` in place (unless `propagate` is false) and runs the
// partitioner's passes on a copy, through `stop_after`.
absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(
    hlo::Module& global, std::optional<int64_t> devices, bool propagate = true,
    spmd::PartitionOptions::Stage stop_after = spmd::PartitionOptions::Stage::kLocalize,
    const hlo::PipelineOptions& pipeline = hlo::DefaultPipelineOptions());

// A copy of `module` with every sharding removed except those on the entry
// parameters and the entry root (the "unannotated" program of `compare`).
std::unique_ptr<hlo::Module> StripInternalAnnotations(const hlo::Module& module);

}  // namespace sharc::driver
