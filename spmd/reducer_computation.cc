#include "spmd/reducer_computation.h"

#include "absl/strings/str_cat.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Shape;

hlo::Computation* BinaryReducer(hlo::Module& module, hlo::Opcode op, hlo::PrimitiveType type) {
  const std::string name =
      absl::StrCat("sharc.", hlo::OpcodeName(op), ".", hlo::PrimitiveTypeName(type));
  if (hlo::Computation* existing = module.FindComputation(name)) return existing;
  auto comp = std::make_unique<hlo::Computation>(name);
  Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, "a", Shape::Scalar(type)));
  Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, "b", Shape::Scalar(type)));
  comp->set_root(comp->AddInstruction(Instruction::Create(op, "r", Shape::Scalar(type), {a, b})));
  return module.AddComputation(std::move(comp));
}

}  // namespace sharc::spmd
