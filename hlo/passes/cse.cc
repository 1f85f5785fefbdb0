#include "hlo/passes/cse.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

// Whether merging two equal instructions of this kind keeps every effect:
// the op itself and everything it calls must be pure.
bool IsPure(const Instruction& inst, absl::flat_hash_set<const Computation*>& seen) {
  const OpTraits& traits = GetOpDef(inst.opcode()).traits;
  if (traits.side_effecting || traits.collective || inst.opcode() == Opcode::kRng ||
      inst.opcode() == Opcode::kCustomCall || inst.opcode() == Opcode::kParameter) {
    return false;
  }
  for (const Computation* callee : inst.called_computations()) {
    if (!seen.insert(callee).second) continue;
    for (const Instruction* body_inst : callee->instructions()) {
      if (body_inst->opcode() == Opcode::kParameter) continue;
      if (!IsPure(*body_inst, seen)) return false;
    }
  }
  return true;
}

bool SameValue(const Instruction& a, const Instruction& b) {
  return a.opcode() == b.opcode() && a.shape() == b.shape() && a.operands() == b.operands() &&
         a.attributes().size() == b.attributes().size() &&
         std::equal(a.attributes().begin(), a.attributes().end(), b.attributes().begin(),
                    [](const Attribute& x, const Attribute& y) {
                      return x.name == y.name && x.value == y.value;
                    }) &&
         a.literal() == b.literal() && a.sharding() == b.sharding() &&
         a.backend_config() == b.backend_config() &&
         a.frontend_attributes() == b.frontend_attributes() && a.variance() == b.variance();
}

// A cheap key that equal instructions share; SameValue decides.
size_t CandidateKey(const Instruction& inst) {
  size_t key = absl::HashOf(static_cast<int>(inst.opcode()), inst.operand_count(),
                            inst.shape().ToString());
  for (const Instruction* operand : inst.operands()) key = absl::HashOf(key, operand);
  return key;
}

}  // namespace

bool EliminateCommonSubexpressions(Computation& computation) {
  absl::flat_hash_map<size_t, std::vector<Instruction*>> seen_by_key;
  absl::flat_hash_set<const Computation*> pure_checked;
  bool changed = false;
  // Definition order: an instruction's operands have already been merged
  // when it is looked at, so chains of duplicates collapse in one sweep.
  for (Instruction* inst : computation.instructions()) {
    pure_checked.clear();
    if (!IsPure(*inst, pure_checked)) continue;
    std::vector<Instruction*>& candidates = seen_by_key[CandidateKey(*inst)];
    Instruction* earlier = nullptr;
    for (Instruction* candidate : candidates) {
      if (SameValue(*candidate, *inst)) {
        earlier = candidate;
        break;
      }
    }
    if (earlier == nullptr) {
      candidates.push_back(inst);
      continue;
    }
    inst->ReplaceAllUsesWith(earlier);
    // Cannot fail: no users left, and the root moved to `earlier`.
    (void)computation.RemoveInstruction(inst);
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> CommonSubexpressionElimination::Run(Module& module) {
  bool changed = false;
  for (Computation* comp : module.computations()) changed |= EliminateCommonSubexpressions(*comp);
  return changed;
}

}  // namespace sharc::hlo
