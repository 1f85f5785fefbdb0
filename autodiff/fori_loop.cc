#include "autodiff/fori_loop.h"

#include <algorithm>
#include <optional>

#include "hlo/ir/computation.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {

using hlo::Instruction;
using hlo::Opcode;

const Instruction* ResolveTupleElements(const Instruction* value) {
  while (value->opcode() == Opcode::kGetTupleElement) {
    const Instruction* tuple = ResolveTupleElements(value->operand(0));
    if (tuple->opcode() != Opcode::kTuple) return value;
    value = tuple->operand(value->attr_int("index"));
  }
  return value;
}

namespace {

// The integer value of a scalar constant, if `value` is one.
std::optional<int64_t> ConstantInt(const Instruction* value) {
  value = ResolveTupleElements(value);
  if (value->opcode() != Opcode::kConstant || !value->shape().is_array() ||
      value->shape().rank() != 0 || !hlo::IsInteger(value->shape().type())) {
    return std::nullopt;
  }
  return value->literal().GetAsInt64(0);
}

// Whether `value` is element `index` of computation parameter 0.
bool IsCarryElement(const Instruction* value, int64_t index) {
  value = ResolveTupleElements(value);
  return value->opcode() == Opcode::kGetTupleElement && value->attr_int("index") == index &&
         value->operand(0)->opcode() == Opcode::kParameter;
}

}  // namespace

absl::StatusOr<ForiLoop> MatchForiLoop(const Instruction& while_inst) {
  auto fail = [&] {
    return hlo::OpError(while_inst,
                        "is differentiable only with a static trip count (a fori loop: an "
                        "integer counter in the carry tuple that starts at a constant, grows by "
                        "1 each iteration and is compared LT against a constant)");
  };
  const hlo::Computation* body = while_inst.attr_computation("body");
  const hlo::Computation* cond = while_inst.attr_computation("condition");
  if (!while_inst.shape().is_tuple() || body == nullptr || cond == nullptr) return fail();
  const Instruction* root = ResolveTupleElements(body->root());
  const Instruction* test = ResolveTupleElements(cond->root());
  if (root->opcode() != Opcode::kTuple || test->opcode() != Opcode::kCompare) return fail();
  for (int64_t k = 0; k < root->operand_count(); ++k) {
    const Instruction* next = ResolveTupleElements(root->operand(k));
    if (next->opcode() != Opcode::kAdd) continue;
    const bool increments =
        (IsCarryElement(next->operand(0), k) && ConstantInt(next->operand(1)) == 1) ||
        (IsCarryElement(next->operand(1), k) && ConstantInt(next->operand(0)) == 1);
    if (!increments) continue;
    std::optional<int64_t> limit;
    const std::string& direction = test->attr_string("direction");
    if (direction == "LT" && IsCarryElement(test->operand(0), k)) {
      limit = ConstantInt(test->operand(1));
    } else if (direction == "GT" && IsCarryElement(test->operand(1), k)) {
      limit = ConstantInt(test->operand(0));
    }
    if (!limit.has_value()) continue;
    const Instruction* init = ResolveTupleElements(while_inst.operand(0));
    std::optional<int64_t> start;
    if (init->opcode() == Opcode::kTuple) {
      start = ConstantInt(init->operand(k));
    } else if (init->opcode() == Opcode::kConstant) {
      start = init->literal().element(k).GetAsInt64(0);
    }
    if (!start.has_value()) continue;
    return ForiLoop{k, *start, std::max<int64_t>(0, *limit - *start)};
  }
  return fail();
}

}  // namespace sharc::autodiff
