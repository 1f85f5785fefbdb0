#include "hlo/ir/scalar_reducer.h"

#include "absl/strings/str_cat.h"

namespace sharc::hlo {

Computation* BinaryReducer(Module& module, Opcode op, PrimitiveType type) {
  const std::string name = absl::StrCat("sharc.", OpcodeName(op), ".", PrimitiveTypeName(type));
  const Shape scalar = Shape::Scalar(type);
  if (Computation* existing = module.FindComputation(name)) {
    // A user's computation may carry the name; reuse it only if it is ours.
    const Instruction* root = existing->root();
    if (root != nullptr && root->opcode() == op && existing->num_parameters() == 2 &&
        root->shape() == scalar) {
      return existing;
    }
  }
  auto comp = std::make_unique<Computation>(name);
  for (int suffix = 1; module.FindComputation(comp->name()) != nullptr; ++suffix) {
    comp->set_name(absl::StrCat(name, ".", suffix));
  }
  Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, "a", scalar));
  Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, "b", scalar));
  comp->set_root(comp->AddInstruction(Instruction::Create(op, "r", scalar, {a, b})));
  return module.AddComputation(std::move(comp));
}

}  // namespace sharc::hlo
