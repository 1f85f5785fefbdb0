#include "hlo/passes/dce.h"

#include <vector>

#include "hlo/ops/named_collectives.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

bool MayRemove(const Instruction& inst, DceOptions::Keep keep) {
  const OpTraits& traits = GetOpDef(inst.opcode()).traits;
  if (traits.side_effecting || inst.attr_bool("custom_call_has_side_effect")) return false;
  if (!traits.collective || keep == DceOptions::Keep::kEffectsButNotCollectives) return true;
  return keep == DceOptions::Keep::kEffectsExceptNamedCollectives &&
         FindNamedCollective(inst.opcode()) != nullptr;
}

}  // namespace

bool RemoveDeadInstructions(Computation& computation, const DceOptions& options) {
  bool any = false;
  // Instructions are in definition order, so one sweep from the back sees
  // every user before its operands; the loop only matters for a
  // computation whose order is not topological.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Instruction*> order = computation.instructions();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* inst = *it;
      if (!inst->users().empty() || inst == computation.root() ||
          inst->opcode() == Opcode::kParameter || !MayRemove(*inst, options.keep)) {
        continue;
      }
      // Cannot fail: the instruction has no users and is not the root.
      changed |= computation.RemoveInstruction(inst).ok();
    }
    any |= changed;
  }
  return any;
}

absl::StatusOr<bool> DeadCodeElimination::Run(Module& module) {
  bool changed = false;
  for (Computation* comp : module.computations()) changed |= RemoveDeadInstructions(*comp, options_);
  return changed;
}

}  // namespace sharc::hlo
