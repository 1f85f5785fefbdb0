#include "spmd/partition/reshard_to_collectives.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "spmd/partition/global_view.h"
#include "spmd/partition/reshard.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Shape;
using hlo::Sharding;

namespace {

// The value `from` laid out as `to`, built from global-view steps appended
// to `comp` (tuples element by element).
absl::StatusOr<Instruction*> Expand(Computation& comp, Instruction* value, const Sharding& from,
                                    const Sharding& to, const std::string& name) {
  const Shape& shape = value->shape();
  if (shape.is_tuple()) {
    std::vector<Instruction*> elements;
    std::vector<Sharding> leaves;
    bool changed = false;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      const Sharding elem_from = from.ElementSharding(shape, i);
      const Sharding elem_to = to.ElementSharding(shape, i);
      auto gte = Instruction::Create(hlo::Opcode::kGetTupleElement,
                                     FreshGlobalName(comp, absl::StrCat(name, ".", i)),
                                     shape.tuple_shape(i), {value});
      gte->set_attr("index", i);
      gte->set_sharding(elem_from);
      Instruction* elem = comp.AddInstruction(std::move(gte));
      ASSIGN_OR_RETURN(Instruction* r, Expand(comp, elem, elem_from, elem_to, elem->name()));
      changed |= r != elem;
      elements.push_back(r);
      for (const Sharding& leaf : elem_to.LeavesFor(shape.tuple_shape(i))) leaves.push_back(leaf);
    }
    if (!changed) {
      for (Instruction* e : elements) RETURN_IF_ERROR(comp.RemoveInstruction(e));
      return value;
    }
    auto tuple = Instruction::Create(hlo::Opcode::kTuple, FreshGlobalName(comp, name), shape,
                                     elements);
    tuple->set_sharding(Sharding::Tuple(leaves));
    return comp.AddInstruction(std::move(tuple));
  }
  ASSIGN_OR_RETURN(std::vector<ReshardStep> steps, PlanReshard(shape, from, to));
  Instruction* current = value;
  for (const ReshardStep& step : steps) {
    current = AddGlobalView(comp, step.target, current, step.after, name);
  }
  return current;
}

absl::Status ExpandReshardsIn(Computation& comp) {
  for (Instruction* inst : comp.instructions()) {
    if (!IsCustomCallTo(*inst, hlo::kSpmdReshard)) continue;
    Instruction* operand = inst->operand(0);
    const std::string name = inst->name();
    absl::StatusOr<Instruction*> expanded =
        Expand(comp, operand, ShardingOrReplicated(*operand), ShardingOrReplicated(*inst), name + ".step");
    if (!expanded.ok()) {
      return absl::Status(expanded.status().code(),
                          absl::StrCat(expanded.status().message(), ", in ", inst->Describe()));
    }
    inst->ReplaceAllUsesWith(*expanded);
    RETURN_IF_ERROR(comp.RemoveInstruction(inst));
    if (*expanded != operand) (*expanded)->set_name(name);
  }
  comp.SortInDefinitionOrder();
  return absl::OkStatus();
}

}  // namespace

absl::Status ReshardToCollectives(hlo::Module& module) {
  for (Computation* comp : module.computations()) RETURN_IF_ERROR(ExpandReshardsIn(*comp));
  return absl::OkStatus();
}

}  // namespace sharc::spmd
