#include "hlo/passes/inline_map.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

// Parameters, scalar constants and side-effect-free elementwise ops on
// scalars only.
bool IsElementwiseFunction(const Computation& f) {
  for (const Instruction* inst : f.instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    if (!inst->shape().is_array() || inst->shape().rank() != 0) return false;
    if (inst->opcode() == Opcode::kConstant) continue;
    if (!HasOpDef(inst->opcode())) return false;
    const OpTraits& traits = GetOpDef(inst->opcode()).traits;
    if (!traits.elementwise || traits.side_effecting || !inst->called_computations().empty()) {
      return false;
    }
  }
  return f.root() != nullptr;
}

}  // namespace

absl::StatusOr<bool> InlineElementwiseMap(Computation& computation, Instruction* map) {
  const Computation* f = map->attr_computation("to_apply");
  if (f == nullptr || !map->shape().is_array() || !IsElementwiseFunction(*f)) return false;
  const std::vector<int64_t>& dims = map->shape().dims();
  absl::flat_hash_map<const Instruction*, Instruction*> arrays;
  auto add = [&](std::unique_ptr<Instruction> inst) {
    return computation.AddInstructionBefore(std::move(inst), map);
  };
  for (const Instruction* inst : f->instructions()) {
    const bool root = inst == f->root();
    const std::string name = root ? map->name() : absl::StrCat(map->name(), ".", inst->name());
    Instruction* array = nullptr;
    if (inst->opcode() == Opcode::kParameter) {
      array = map->operand(inst->parameter_number());
    } else if (inst->opcode() == Opcode::kConstant) {
      Instruction* scalar = add(inst->CloneWithOperands(absl::StrCat(name, ".scalar"), {}));
      auto broadcast = Instruction::Create(Opcode::kBroadcast, name,
                                           Shape(inst->shape().type(), dims), {scalar});
      broadcast->set_attr("dimensions", IntList{});
      array = add(std::move(broadcast));
    } else {
      std::vector<Instruction*> operands;
      for (const Instruction* op : inst->operands()) operands.push_back(arrays.at(op));
      std::unique_ptr<Instruction> clone = inst->CloneWithOperands(name, operands);
      clone->set_shape(Shape(inst->shape().type(), dims));
      clone->clear_sharding();
      array = add(std::move(clone));
    }
    arrays[inst] = array;
  }
  Instruction* result = arrays.at(f->root());
  if (result->opcode() != Opcode::kParameter) {
    if (map->sharding()) result->set_sharding(*map->sharding());
    result->mutable_metadata() = map->metadata();
    result->set_location(map->location());
  }
  map->ReplaceAllUsesWith(result);
  RETURN_IF_ERROR(computation.RemoveInstruction(map));
  return true;
}

}  // namespace sharc::hlo
