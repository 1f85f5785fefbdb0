#include "autodiff/cleanup.h"

#include "absl/container/flat_hash_set.h"
#include "autodiff/shard_map_pruning.h"
#include "hlo/passes/dce.h"

namespace sharc::autodiff {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

void SimplifyComputation(Computation& computation) {
  for (Instruction* inst : computation.instructions()) {
    if (inst->opcode() != Opcode::kGetTupleElement) continue;
    Instruction* tuple = inst->operand(0);
    if (tuple->opcode() == Opcode::kTuple) {
      inst->ReplaceAllUsesWith(tuple->operand(inst->attr_int("index")));
    }
  }
  hlo::DceOptions dce;
  dce.keep = hlo::DceOptions::Keep::kEffects;
  hlo::RemoveDeadInstructions(computation, dce);
}

namespace {

void Reach(const Computation* c, absl::flat_hash_set<const Computation*>& seen) {
  if (!seen.insert(c).second) return;
  for (const Instruction* inst : c->instructions()) {
    for (const Computation* callee : inst->called_computations()) Reach(callee, seen);
  }
}

}  // namespace

void CleanUp(hlo::Module& module, const std::vector<Computation*>& keep,
             const std::vector<Computation*>& created) {
  absl::flat_hash_set<const Computation*> created_set(created.begin(), created.end());
  absl::flat_hash_set<const Computation*> reached;
  for (Computation* c : keep) Reach(c, reached);
  for (Computation* c : module.computations()) {
    if (reached.contains(c) && created_set.contains(c)) SimplifyComputation(*c);
  }
  for (Computation* c : module.computations()) {
    if (reached.contains(c) && created_set.contains(c)) PruneShardMapOutputs(*c, created_set);
  }
  // Simplifying can drop the last call of a helper: reach again.
  reached.clear();
  for (Computation* c : keep) Reach(c, reached);
  for (Computation* c : created) {
    if (!reached.contains(c)) module.RemoveComputation(c);
  }
}

}  // namespace sharc::autodiff
