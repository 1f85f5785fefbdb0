#include "driver/compile_stages.h"

#include "absl/strings/str_cat.h"
#include "driver/compiler_passes.h"
#include "driver/module_loader.h"
#include "hlo/base/status_macros.h"

namespace sharc::driver {

absl::Status PrepareModule(hlo::Module& module, const CompileOptions& options) {
  hlo::ModuleConfig& config = module.mutable_config();
  if (options.mesh) {
    config.mesh = options.mesh->axes();
    config.num_partitions = options.mesh->num_devices();
  }
  if (options.devices) config.num_partitions = *options.devices;
  CompilerSpec spec;
  spec.mapreduce_mode = options.mapreduce_mode;
  spec.lower_shard_maps = options.lower_shard_maps;
  return CompilerPipeline(spec, Stage::kPrepare, Stage::kPrepare, options.pipeline).Run(module);
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
                                                        std::optional<int64_t> devices,
                                                        const hlo::PipelineOptions& pipeline) {
  if (devices) module.mutable_config().num_partitions = *devices;
  hlo::Pipeline passes = CompilerPipeline(CompilerSpec(), Stage::kPropagate, Stage::kPropagate, pipeline);
  RETURN_IF_ERROR(passes.Run(module));
  return static_cast<const PropagatePass&>(*passes.passes().back()).result();
}

absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(
    hlo::Module& global, std::optional<int64_t> devices, bool propagate,
    spmd::PartitionOptions::Stage stop_after, const hlo::PipelineOptions& pipeline) {
  if (propagate) {
    RETURN_IF_ERROR(PropagateModule(global, devices, pipeline).status());
  } else if (devices) {
    global.mutable_config().num_partitions = *devices;
  }
  CompilerSpec spec;
  spec.partition.num_devices = global.config().num_partitions;
  spec.partition.stop_after = stop_after;
  std::unique_ptr<hlo::Module> local = global.Clone();
  RETURN_IF_ERROR(
      CompilerPipeline(spec, Stage::kPartition, Stage::kPartition, pipeline).Run(*local));
  return local;
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

}  // namespace sharc::driver
