#include "autodiff/jvp_rules/scatter_combiner.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;

ScatterCombiner ClassifyScatterCombiner(const Computation& combiner) {
  const Instruction* root = combiner.root();
  if (root == nullptr || combiner.num_parameters() != 2) return ScatterCombiner::kOther;
  const Instruction* current = combiner.parameter(0);
  const Instruction* update = combiner.parameter(1);
  if (root == update) return ScatterCombiner::kOverwrite;
  if (root->opcode() == Opcode::kAdd &&
      ((root->operand(0) == current && root->operand(1) == update) ||
       (root->operand(0) == update && root->operand(1) == current))) {
    return ScatterCombiner::kAdd;
  }
  return ScatterCombiner::kOther;
}

Computation* OverwriteCombiner(hlo::Module& module, hlo::PrimitiveType type) {
  const std::string name = absl::StrCat("sharc.overwrite.", hlo::PrimitiveTypeName(type));
  const hlo::Shape scalar = hlo::Shape::Scalar(type);
  std::string unique = name;
  for (int suffix = 1;; ++suffix) {
    Computation* existing = module.FindComputation(unique);
    if (existing == nullptr) break;
    // A user's computation may carry the name; reuse it only if it is ours.
    if (existing->num_parameters() == 2 && existing->root() == existing->parameter(1) &&
        existing->root()->shape() == scalar && existing->parameter(0)->shape() == scalar) {
      return existing;
    }
    unique = absl::StrCat(name, ".", suffix);
  }
  auto comp = std::make_unique<Computation>(unique);
  comp->AddInstruction(Instruction::CreateParameter(0, "current", scalar));
  Instruction* update = comp->AddInstruction(Instruction::CreateParameter(1, "update", scalar));
  comp->set_root(update);
  return module.AddComputation(std::move(comp));
}

}  // namespace sharc::autodiff
