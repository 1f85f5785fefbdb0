#include "autodiff/transpose_naming.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/ir/computation.h"

namespace sharc::autodiff {

namespace {
constexpr char kSuffix[] = ".transpose";
}  // namespace

std::string TransposedComputationName(const Module& module, const std::string& name) {
  if (absl::EndsWith(name, kSuffix)) {
    std::string original = name.substr(0, name.size() - (sizeof(kSuffix) - 1));
    if (!original.empty() && module.FindComputation(original) == nullptr) return original;
  }
  return UniqueComputationName(module, name + kSuffix);
}

std::vector<std::string> ResultElementNames(const Computation& computation) {
  const Instruction* root = computation.root();
  if (!root->shape().is_tuple()) return {root->name()};
  std::vector<std::string> names;
  for (int64_t k = 0; k < root->shape().tuple_size(); ++k) {
    names.push_back(root->opcode() == Opcode::kTuple ? root->operand(k)->name()
                                                     : absl::StrCat(root->name(), ".", k));
  }
  return names;
}

void NameCotangent(Instruction* value, const std::string& name) {
  if (value == nullptr || value->opcode() == Opcode::kParameter || value->name() == name) return;
  const Computation* computation = value->parent();
  if (computation == nullptr || computation->FindInstruction(name) != nullptr) return;
  value->set_name(name);
}

}  // namespace sharc::autodiff
