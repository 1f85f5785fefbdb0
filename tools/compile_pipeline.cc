#include "tools/compile_pipeline.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "spmd/partition/partitioner.h"
#include "spmd/shard_map_lowering.h"
#include "tools/module_loader.h"

namespace sharc::tools {

absl::StatusOr<CompileOptions> CompileOptionsFromFlags(const ParsedArgs& args) {
  CompileOptions options;
  if (auto d = args.Get("devices")) {
    ASSIGN_OR_RETURN(options.devices, ParseIntFlag("devices", *d, 1, 1 << 20));
  }
  if (auto m = args.Get("mesh")) {
    absl::StatusOr<spmd::Mesh> mesh = spmd::Mesh::Parse(*m);
    if (!mesh.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--mesh: ", mesh.status().message()));
    }
    if (options.devices && *options.devices != mesh->num_devices()) {
      return absl::InvalidArgumentError(absl::StrCat("--mesh ", mesh->ToString(), " has ",
                                                     mesh->num_devices(), " devices but --devices ",
                                                     *options.devices));
    }
    options.mesh = *mesh;
  }
  if (auto mode = args.Get("mapreduce-mode")) {
    absl::StatusOr<spmd::MapReduceMode> parsed = spmd::ParseMapReduceMode(*mode);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--mapreduce-mode: ", parsed.status().message()));
    }
    options.mapreduce_mode = *parsed;
  }
  return options;
}

absl::Status PrepareModule(hlo::Module& module, const CompileOptions& options) {
  hlo::ModuleConfig& config = module.mutable_config();
  if (options.mesh) {
    config.mesh = options.mesh->axes();
    config.num_partitions = options.mesh->num_devices();
  }
  if (options.devices) config.num_partitions = *options.devices;
  RETURN_IF_ERROR(spmd::LowerMapReduce(module, options.mapreduce_mode));
  if (!options.lower_shard_maps) return absl::OkStatus();
  return spmd::LowerShardMaps(module);
}

absl::StatusOr<std::unique_ptr<hlo::Module>> LoadPreparedModule(const std::string& path,
                                                                const CompileOptions& options) {
  LoadOptions load;
  load.allow_transfers = true;  // propagating and partitioning move no values
  ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module, LoadModule(path, load));
  absl::Status prepared = PrepareModule(*module, options);
  if (!prepared.ok()) {
    return absl::Status(prepared.code(),
                        absl::StrCat(DisplayName(path), ": error: ", prepared.message()));
  }
  return module;
}

absl::StatusOr<spmd::PropagationResult> PropagateModule(hlo::Module& module,
                                                        std::optional<int64_t> devices) {
  if (devices) module.mutable_config().num_partitions = *devices;
  RETURN_IF_ERROR(spmd::LowerMapReduce(module, spmd::MapReduceMode::kAnnotated));
  RETURN_IF_ERROR(spmd::LowerShardMaps(module));
  return spmd::PropagateShardings(module);
}

absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(
    hlo::Module& global, std::optional<int64_t> devices, bool propagate,
    spmd::PartitionOptions::Stage stop_after) {
  if (propagate) {
    RETURN_IF_ERROR(PropagateModule(global, devices).status());
  } else if (devices) {
    global.mutable_config().num_partitions = *devices;
  }
  spmd::PartitionOptions options;
  options.num_devices = global.config().num_partitions;
  options.stop_after = stop_after;
  return spmd::PartitionModule(global, options);
}

std::unique_ptr<hlo::Module> StripInternalAnnotations(const hlo::Module& module) {
  std::unique_ptr<hlo::Module> copy = module.Clone();
  for (hlo::Computation* comp : copy->computations()) {
    for (hlo::Instruction* inst : comp->instructions()) {
      const bool keep = comp == copy->entry() &&
                        (inst->opcode() == hlo::Opcode::kParameter || inst == comp->root());
      if (!keep) inst->clear_sharding();
    }
  }
  return copy;
}

}  // namespace sharc::tools
