#include "hlo/ops/sort_key_function.h"

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/module.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/scalar_function.h"

namespace sharc::hlo {
namespace {

// Whether `a` (of parameter pa) and `b` (of parameter pb) compute the same
// elementwise function of their one parameter.
bool SameFunction(const Instruction* a, const Instruction* b, int64_t pa, int64_t pb,
                  std::set<std::pair<const Instruction*, const Instruction*>>& same) {
  if (same.count({a, b})) return true;
  if (a->opcode() != b->opcode() || a->shape() != b->shape() || !a->shape().is_array() ||
      a->shape().rank() != 0 || a->operand_count() != b->operand_count()) {
    return false;
  }
  if (a->opcode() == Opcode::kParameter) {
    return a->parameter_number() == pa && b->parameter_number() == pb;
  }
  if (a->opcode() == Opcode::kConstant) {
    if (!(a->literal() == b->literal())) return false;
  } else {
    if (!IsScalarElementwise(*a)) return false;
    if (a->attributes().size() != b->attributes().size() ||
        !std::equal(a->attributes().begin(), a->attributes().end(), b->attributes().begin(),
                    [](const Attribute& x, const Attribute& y) {
                      return x.name == y.name && x.value == y.value;
                    })) {
      return false;
    }
  }
  for (int64_t i = 0; i < a->operand_count(); ++i) {
    if (!SameFunction(a->operand(i), b->operand(i), pa, pb, same)) return false;
  }
  same.insert({a, b});
  return true;
}

// The one parameter `inst` reads, or -1 if none or several.
int64_t OnlyParameter(const Instruction* inst) {
  if (inst->opcode() == Opcode::kParameter) return inst->parameter_number();
  int64_t found = -1;
  for (const Instruction* op : inst->operands()) {
    if (op->opcode() == Opcode::kConstant) continue;
    const int64_t p = OnlyParameter(op);
    if (p < 0 || (found >= 0 && p != found)) return -1;
    found = p;
  }
  return found;
}

}  // namespace

namespace {

// `compare` of the same function of both elements of one operand.
std::optional<KeyFunction> MatchKeyCompare(const Instruction* compare) {
  if (compare->opcode() != Opcode::kCompare || compare->operand_count() != 2) {
    return std::nullopt;
  }
  const std::string& direction = compare->attr_string("direction");
  if (direction != "LT" && direction != "GT") return std::nullopt;
  const Instruction* a = compare->operand(0);
  const Instruction* b = compare->operand(1);
  const int64_t pa = OnlyParameter(a), pb = OnlyParameter(b);
  if (pa < 0 || pb < 0 || pa / 2 != pb / 2 || pa == pb) return std::nullopt;
  std::set<std::pair<const Instruction*, const Instruction*>> same;
  if (!SameFunction(a, b, pa, pb, same)) return std::nullopt;
  KeyFunction match;
  match.operand = pa / 2;
  // compare(f(lhs), f(rhs)) LT is ascending by f; swapped, descending.
  match.descending = (direction == "GT") == (pa % 2 == 0);
  const AttrValue* type = compare->attr("type");
  const std::string* type_name = type ? std::get_if<std::string>(type) : nullptr;
  match.total_order = type_name != nullptr && *type_name == "TOTALORDER";
  match.key = a;
  match.parameter = pa;
  return match;
}

}  // namespace

std::optional<KeyFunction> MatchKeyFunction(const Computation& comparator) {
  if (comparator.root() == nullptr) return std::nullopt;
  return MatchKeyCompare(comparator.root());
}

std::optional<LexicographicKeys> MatchLexicographic(const Computation& comparator) {
  // select(compare(first, reversed, EQ), second, first): where the first
  // comparison says neither element comes first, the second decides.
  const Instruction* root = comparator.root();
  if (root == nullptr || root->opcode() != Opcode::kSelect) return std::nullopt;
  const Instruction* tie = root->operand(0);
  const Instruction* first = root->operand(2);
  if (tie->opcode() != Opcode::kCompare || tie->attr_string("direction") != "EQ") {
    return std::nullopt;
  }
  const Instruction* reversed =
      tie->operand(0) == first ? tie->operand(1) : tie->operand(1) == first ? tie->operand(0)
                                                                           : nullptr;
  if (reversed == nullptr || reversed->opcode() != Opcode::kCompare ||
      first->opcode() != Opcode::kCompare ||
      reversed->attr_string("direction") != first->attr_string("direction") ||
      reversed->operand(0) != first->operand(1) || reversed->operand(1) != first->operand(0)) {
    return std::nullopt;
  }
  std::optional<KeyFunction> a = MatchKeyCompare(first);
  std::optional<KeyFunction> b = MatchKeyCompare(root->operand(1));
  if (!a || !b || a->total_order || b->total_order) return std::nullopt;
  return LexicographicKeys{*a, *b};
}

absl::StatusOr<Literal> EvaluateKeys(const KeyFunction& function, const Literal& operand) {
  // f on whole arrays, the operand in place of its parameter.
  auto module = std::make_unique<Module>("sort_keys");
  Computation* entry = module->AddComputation(std::make_unique<Computation>("keys"));
  module->set_entry(entry);
  Instruction* keyed =
      entry->AddInstruction(Instruction::CreateParameter(0, "keyed", operand.shape()));
  entry->set_root(LiftScalarFunction(
      *function.key, operand.shape().dims(), [&](int64_t) { return keyed; },
      [&](std::unique_ptr<Instruction> inst) { return entry->AddInstruction(std::move(inst)); },
      "key", "key"));
  return Evaluate(*module, {operand});
}

}  // namespace sharc::hlo
