#include "tools/compile_pipeline.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "spmd/partition/partitioner.h"

namespace sharc::tools {

absl::StatusOr<spmd::PropagationResult> PropagateModule(hlo::Module& module,
                                                        std::optional<int64_t> devices) {
  if (devices) module.mutable_config().num_partitions = *devices;
  return spmd::PropagateShardings(module);
}

absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(hlo::Module& global,
                                                             std::optional<int64_t> devices,
                                                             bool propagate) {
  if (propagate) {
    RETURN_IF_ERROR(PropagateModule(global, devices).status());
  } else if (devices) {
    global.mutable_config().num_partitions = *devices;
  }
  spmd::PartitionOptions options;
  options.num_devices = global.config().num_partitions;
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
