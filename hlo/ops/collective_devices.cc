#include "hlo/ops/collective_devices.h"

#include <algorithm>

#include "hlo/ops/collective_groups.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {

int64_t DevicesNamedByCollectives(const Module& module) {
  int64_t largest = -1;
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      if (!HasOpDef(inst->opcode())) continue;
      for (const AttrSpec& spec : GetOpDef(inst->opcode()).attributes) {
        if (spec.kind != AttrKind::kReplicaGroups && spec.kind != AttrKind::kPairs) continue;
        for (const IntList& group : inst->attr_int_lists(spec.name)) {
          for (int64_t id : group) largest = std::max(largest, id);
        }
      }
    }
  }
  return largest + 1;
}

bool CollectivesNameReplicas(const Module& module) {
  bool any = false;
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      if (!HasOpDef(inst->opcode())) continue;
      for (const AttrSpec& spec : GetOpDef(inst->opcode()).attributes) {
        if (spec.kind != AttrKind::kReplicaGroups && spec.kind != AttrKind::kPairs) continue;
        // An all-reduce, all-gather or reduce-scatter with a channel but no
        // global ids still names replicas (each group spans the partitions).
        const CollectiveGroupMode mode = GroupModeOf(*inst);
        if (mode == CollectiveGroupMode::kCrossPartition ||
            mode == CollectiveGroupMode::kFlattenedId) {
          return false;
        }
        any = true;
      }
    }
  }
  return any;
}

bool HeaderDeclaresNoDevices(const ModuleConfig& config) {
  return config.num_partitions == 1 && config.replica_count == 1 && config.mesh.empty();
}

}  // namespace sharc::hlo
