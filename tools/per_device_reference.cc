#include "tools/per_device_reference.h"

#include <numeric>

#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_def.h"
#include "spmd/sharding_util.h"

namespace sharc::tools {

using hlo::Instruction;
using hlo::Sharding;

namespace {

// A leaf's sharding in the reference: manual stays, a partially manual
// layout keeps its manual dims and replicates its data dims, anything else
// is replicated.
Sharding ReferenceLeaf(const Sharding& s) {
  if (s.IsManual()) return s;
  if (s.IsTiled() && s.HasManualSubgroup()) {
    std::vector<int64_t> dims(static_cast<size_t>(s.TiledDataRank()));
    std::iota(dims.begin(), dims.end(), 0);
    return spmd::ReplicateDims(s, dims);
  }
  return Sharding::Replicated();
}

Sharding ReferenceSharding(const Sharding& s) {
  if (!s.IsTuple()) return ReferenceLeaf(s);
  std::vector<Sharding> leaves;
  for (const Sharding& leaf : s.tuple_elements()) leaves.push_back(ReferenceLeaf(leaf));
  return Sharding::Tuple(std::move(leaves));
}

bool IsRegionBoundary(const Instruction& inst) {
  return hlo::IsCustomCallTo(inst, hlo::kFullToShardShapeTarget) ||
         hlo::IsCustomCallTo(inst, hlo::kShardToFullShapeTarget);
}

}  // namespace

bool HasManualRegions(const hlo::Module& module) {
  for (const hlo::Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (hlo::IsCustomCallTo(*inst, hlo::kFullToShardShapeTarget) &&
          inst->operand_count() == 1 && inst->operand(0)->shape() != inst->shape()) {
        return true;
      }
    }
  }
  return false;
}

std::unique_ptr<hlo::Module> PerDeviceReference(const hlo::Module& module) {
  std::unique_ptr<hlo::Module> reference = module.Clone();
  for (hlo::Computation* comp : reference->computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding() || IsRegionBoundary(*inst)) continue;
      // A region boundary's operand: the layout whose tiles become the
      // devices' values, or whose tiles the devices' values are.
      bool boundary = false;
      for (const Instruction* user : inst->users()) boundary = boundary || IsRegionBoundary(*user);
      // A collective's pairs and groups name devices: which tile each
      // device holds is part of its meaning.
      const bool collective = hlo::HasOpDef(inst->opcode()) &&
                              hlo::GetOpDef(inst->opcode()).traits.collective;
      if (!boundary && !collective) inst->set_sharding(ReferenceSharding(*inst->sharding()));
    }
  }
  return reference;
}

}  // namespace sharc::tools
