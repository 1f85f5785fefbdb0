#include "hlo/passes/upcast_narrow_types.h"

#include "absl/strings/str_cat.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/ops/narrow_type_semantics.h"

namespace sharc::hlo {
namespace {

bool IsNarrowArray(const Shape& shape) { return shape.is_array() && IsNarrowType(shape.type()); }

Shape WideShape(const Shape& narrow) {
  return Shape(ComputeTypeOfNarrow(narrow.type()), narrow.dims());
}

void Upcast(Computation& computation, Instruction* inst, Instruction* next) {
  for (int64_t k = 0; k < inst->operand_count(); ++k) {
    Instruction* operand = inst->operand(k);
    if (!IsNarrowArray(operand->shape())) continue;
    Instruction* wide = computation.AddInstructionBefore(
        Instruction::Create(Opcode::kConvert, absl::StrCat(inst->name(), ".operand", k),
                            WideShape(operand->shape()), {operand}),
        inst);
    inst->ReplaceOperand(k, wide);
  }
  if (!IsNarrowArray(inst->shape())) return;
  const Shape narrow = inst->shape();
  const std::string name = inst->name();
  inst->set_shape(WideShape(narrow));
  inst->set_name(name + ".wide");
  // The convert back takes the instruction's name and place for its users.
  std::unique_ptr<Instruction> back = Instruction::Create(Opcode::kConvert, name, narrow);
  if (inst->sharding()) back->set_sharding(*inst->sharding());
  back->mutable_metadata() = inst->metadata();
  back->set_location(inst->location());
  Instruction* added = next != nullptr ? computation.AddInstructionBefore(std::move(back), next)
                                       : computation.AddInstruction(std::move(back));
  inst->ReplaceAllUsesWith(added);
  added->AppendOperand(inst);
}

}  // namespace

absl::Status UpcastNarrowTypes(Module& module) {
  for (Computation* computation : module.computations()) {
    const std::vector<Instruction*> instructions = computation->instructions();
    for (size_t i = 0; i < instructions.size(); ++i) {
      Instruction* inst = instructions[i];
      if (HandlesNarrowValues(*inst) || !inst->called_computations().empty()) continue;
      bool narrow = IsNarrowArray(inst->shape());
      for (const Instruction* operand : inst->operands()) narrow |= IsNarrowArray(operand->shape());
      if (!narrow) continue;
      Upcast(*computation, inst, i + 1 < instructions.size() ? instructions[i + 1] : nullptr);
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo
