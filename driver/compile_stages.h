// The compile stages as the subcommands use them: propagate shardings over
// N devices, then partition. `sharc propagate`, `partition`, `report` and
// `compare` all go through here so they agree on what a module means.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/mesh.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"
#include "tools/flags.h"

namespace sharc::tools {

// What the compiling subcommands share beyond the module itself.
struct CompileOptions {
  std::optional<int64_t> devices;  // --devices: overrides num_partitions
  std::optional<spmd::Mesh> mesh;  // --mesh: overrides the header's mesh
  spmd::MapReduceMode mapreduce_mode = spmd::MapReduceMode::kAnnotated;  // --mapreduce-mode
  // shard_maps become per-device regions with collectives; a run of the
  // global program on one device keeps them (the interpreter runs their
  // bodies per mesh device itself).
  bool lower_shard_maps = true;
};

// The flags behind CompileOptions, for the subcommands' flag tables.
inline constexpr FlagSpec kMeshFlag = {"mesh", FlagKind::kValue};
inline constexpr FlagSpec kMapReduceModeFlag = {"mapreduce-mode", FlagKind::kValue};

// Reads --devices, --mesh and --mapreduce-mode (usage errors as InvalidArgument).
// In usage texts they read:
//   --mesh AXES           named mesh, e.g. clients=2,data=2 (overrides the header)
//   --mapreduce-mode M    MapReduce lowering: annotated (default), ns or loop
absl::StatusOr<CompileOptions> CompileOptionsFromFlags(const ParsedArgs& args);

// Applies the device count and mesh to the module's header, lowers its
// MapReduce blocks (spmd/mapreduce_lowering.h) in the chosen mode and its
// shard_maps (spmd/shard_map_lowering.h).
absl::Status PrepareModule(hlo::Module& module, const CompileOptions& options);

// LoadModule + PrepareModule; the error message is a complete diagnostic.
absl::StatusOr<std::unique_ptr<hlo::Module>> LoadPreparedModule(const std::string& path,
                                                                const CompileOptions& options);

// Applies `--devices N` (overriding the header's num_partitions) and runs
// propagation in place. MapReduce blocks still in the module are lowered in
// the default (annotated) mode first, and shard_maps lowered.
absl::StatusOr<spmd::PropagationResult> PropagateModule(hlo::Module& module,
                                                        std::optional<int64_t> devices);

// Propagates (unless `propagate` is false) and partitions a copy of `global`,
// through the partitioner pass `stop_after`.
absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(
    hlo::Module& global, std::optional<int64_t> devices, bool propagate = true,
    spmd::PartitionOptions::Stage stop_after = spmd::PartitionOptions::Stage::kLocalize);

// A copy of `module` with every sharding removed except those on the entry
// parameters and the entry root (the "unannotated" program of `compare`).
std::unique_ptr<hlo::Module> StripInternalAnnotations(const hlo::Module& module);

}  // namespace sharc::tools
