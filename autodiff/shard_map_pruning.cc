#include "autodiff/shard_map_pruning.h"

#include <algorithm>
#include <vector>

#include "hlo/ir/module.h"
#include "hlo/ops/shard_map_attrs.h"
#include "hlo/passes/dce.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::autodiff {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

namespace {

int64_t CallerCount(const Computation& body) {
  int64_t n = 0;
  const hlo::Module* module = body.parent();
  if (module == nullptr) return 0;
  for (const Computation* c : module->computations()) {
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) n += callee == &body;
    }
  }
  return n;
}

// Removes the body's unused values, named collectives included (every
// device runs this body, so each drops the same ones).
void RemoveDeadCode(Computation& body) {
  hlo::DceOptions dce;
  dce.keep = hlo::DceOptions::Keep::kEffectsExceptNamedCollectives;
  hlo::RemoveDeadInstructions(body, dce);
}

void Prune(Instruction& shard_map) {
  Computation* body = shard_map.attr_computation("to_apply");
  Instruction* root = body->root();
  std::vector<bool> read(static_cast<size_t>(shard_map.shape().tuple_size()), false);
  for (const Instruction* user : shard_map.users()) {
    if (user->opcode() != Opcode::kGetTupleElement) return;
    read[static_cast<size_t>(user->attr_int("index"))] = true;
  }
  if (std::find(read.begin(), read.end(), false) == read.end() ||
      std::find(read.begin(), read.end(), true) == read.end()) {
    return;  // all read, or none (then the shard_map itself is dead)
  }
  absl::StatusOr<std::vector<hlo::AxisSpec>> specs = hlo::ShardMapSpecs(shard_map, "out_specs");
  if (!specs.ok() || specs->size() != read.size()) return;
  std::vector<int64_t> new_index(read.size(), -1);
  std::vector<Instruction*> kept;
  std::vector<hlo::Shape> local, global;
  std::vector<hlo::AxisSpec> kept_specs;
  for (size_t k = 0; k < read.size(); ++k) {
    if (!read[k]) continue;
    new_index[k] = static_cast<int64_t>(kept.size());
    kept.push_back(root->operand(static_cast<int64_t>(k)));
    local.push_back(kept.back()->shape());
    global.push_back(shard_map.shape().tuple_shape(static_cast<int64_t>(k)));
    kept_specs.push_back((*specs)[k]);
  }
  auto tuple = Instruction::Create(Opcode::kTuple, root->name(), hlo::Shape::Tuple(local), kept);
  tuple->set_variance(root->variance());
  root->set_name(root->name() + ".unpruned");
  body->set_root(body->AddInstruction(std::move(tuple)));
  RemoveDeadCode(*body);
  for (Instruction* user : shard_map.users()) {
    user->set_attr("index", new_index[static_cast<size_t>(user->attr_int("index"))]);
  }
  shard_map.set_attr("out_specs", hlo::PrintSpecsText(kept_specs));
  shard_map.set_shape(hlo::Shape::Tuple(global));
}

}  // namespace

void PruneShardMapOutputs(Computation& computation,
                          const absl::flat_hash_set<const Computation*>& own_bodies) {
  for (Instruction* inst : computation.instructions()) {
    if (inst->opcode() != Opcode::kShardMap || !inst->shape().is_tuple()) continue;
    Computation* body = inst->attr_computation("to_apply");
    if (body == nullptr || !own_bodies.contains(body) || body->root() == nullptr ||
        body->root()->opcode() != Opcode::kTuple || CallerCount(*body) != 1) {
      continue;
    }
    Prune(*inst);
  }
}

}  // namespace sharc::autodiff
