#include "hlo/ops/sort_key_function.h"

#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ir/module.h"
#include "hlo/ops/op_def.h"

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
    if (!HasOpDef(a->opcode())) return false;
    const OpTraits& traits = GetOpDef(a->opcode()).traits;
    // A scalar-to-scalar bitcast-convert keeps the bit width: elementwise
    // over arrays too (JAX's total-order key reinterprets float bits).
    const bool scalar_bitcast = a->opcode() == Opcode::kBitcastConvert &&
                                a->operand(0)->shape().is_array() &&
                                a->operand(0)->shape().rank() == 0;
    if ((!traits.elementwise && !scalar_bitcast) || traits.side_effecting ||
        !a->called_computations().empty()) {
      return false;
    }
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
  // f on whole arrays: the parameter becomes the operand, constants are
  // broadcast, each op takes the operand's dims.
  const std::vector<int64_t>& dims = operand.shape().dims();
  auto module = std::make_unique<Module>("sort_keys");
  Computation* entry = module->AddComputation(std::make_unique<Computation>("keys"));
  module->set_entry(entry);
  absl::flat_hash_map<const Instruction*, Instruction*> arrays;
  int64_t next = 0;
  std::vector<const Instruction*> order;
  std::set<const Instruction*> seen;
  std::vector<std::pair<const Instruction*, bool>> stack{{function.key, false}};
  while (!stack.empty()) {
    auto [inst, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(inst);
      continue;
    }
    if (!seen.insert(inst).second) continue;
    stack.push_back({inst, true});
    for (const Instruction* op : inst->operands()) stack.push_back({op, false});
  }
  for (const Instruction* inst : order) {
    const std::string name = absl::StrCat("k", next++);
    if (inst->opcode() == Opcode::kParameter) {
      arrays[inst] = entry->AddInstruction(Instruction::CreateParameter(0, name, operand.shape()));
    } else if (inst->opcode() == Opcode::kConstant) {
      Instruction* scalar = entry->AddInstruction(inst->CloneWithOperands(name + "s", {}));
      auto broadcast = Instruction::Create(Opcode::kBroadcast, name,
                                           Shape(inst->shape().type(), dims), {scalar});
      broadcast->set_attr("dimensions", IntList{});
      arrays[inst] = entry->AddInstruction(std::move(broadcast));
    } else {
      std::vector<Instruction*> operands;
      for (const Instruction* op : inst->operands()) operands.push_back(arrays.at(op));
      std::unique_ptr<Instruction> clone = inst->CloneWithOperands(name, operands);
      clone->set_shape(Shape(inst->shape().type(), dims));
      clone->clear_sharding();
      arrays[inst] = entry->AddInstruction(std::move(clone));
    }
  }
  entry->set_root(arrays.at(function.key));
  return Evaluate(*module, {operand});
}

}  // namespace sharc::hlo
