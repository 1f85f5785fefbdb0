// Transpose rule of a fori while loop whose carry is linear except for its
// counter, loop-invariant values and values the body resets to constants
// (the tangent loops the JVP rule builds, and their transposes).
// The transposed loop runs the transposed body for the iterations in reverse
// order: it counts r = 0..n-1 (so it is a fori loop again and can be
// differentiated once more) and gives the body the counter value of
// iteration n-1-r.
#include "absl/strings/str_cat.h"
#include "autodiff/fori_loop.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

// Whether `value` is the body parameter's element at `path` (a chain of
// get-tuple-elements).
bool IsParameterElement(const Instruction* value, std::vector<int64_t> path) {
  while (!path.empty()) {
    value = ResolveTupleElements(value);
    if (value->opcode() != Opcode::kGetTupleElement || value->attr_int("index") != path.back()) {
      return false;
    }
    path.pop_back();
    value = value->operand(0);
  }
  return ResolveTupleElements(value)->opcode() == Opcode::kParameter;
}

// A value computed from constants alone (the zero cotangents a transposed
// body returns for its non-linear leaves), copied into `e`; nullptr if
// `value` is not one.
Instruction* CopyConstant(Emitter& e, const Instruction* value) {
  value = ResolveTupleElements(value);
  if (value->opcode() == Opcode::kConstant) return e.Add(hlo::CloneWithOperands(*value, {}));
  if (value->opcode() == Opcode::kBroadcast) {
    Instruction* operand = CopyConstant(e, value->operand(0));
    if (operand != nullptr) return e.Add(hlo::CloneWithOperands(*value, {operand}));
  }
  return nullptr;
}

// The body's input at the carry position `path` in forward iteration
// `iteration`, for the reverse loop to feed the transposed body. Linear
// leaves are not read (their cotangents flow instead); a non-linear leaf must
// be passed through unchanged by the body (then it is its initial value
// `initial`), or be set to a constant (then it is `initial` in iteration 0
// and that constant afterwards).
absl::StatusOr<Instruction*> BodyInput(Emitter& e, const Instruction& inst,
                                       const Instruction* next, const LinearTree& tree,
                                       Instruction* initial, Instruction* first_iteration,
                                       std::vector<int64_t> path) {
  if (tree.All()) return initial;
  if (!tree.Any()) {
    if (IsParameterElement(next, path)) return initial;
    Instruction* later = CopyConstant(e, next);
    if (later == nullptr || later->shape().is_tuple()) {
      return hlo::OpError(inst, "cannot be transposed: a non-linear value in its carry changes "
                                "between iterations (only the counter may, or a value the body "
                                "sets to a constant)");
    }
    Instruction* first = first_iteration;
    if (later->shape().rank() > 0) {
      first = BroadcastInDim(e, first_iteration,
                             Shape(PrimitiveType::kPred, later->shape().dims()), {});
    }
    return Select(e, first, initial, later);
  }
  const Instruction* resolved = ResolveTupleElements(next);
  if (resolved->opcode() != Opcode::kTuple) {
    return hlo::OpError(inst, "cannot be transposed: its body builds a carry element that mixes "
                              "linear and non-linear values in a way the transpose cannot follow");
  }
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < resolved->operand_count(); ++i) {
    std::vector<int64_t> sub = path;
    sub.push_back(i);
    ASSIGN_OR_RETURN(Instruction * element,
                     BodyInput(e, inst, resolved->operand(i), tree.element(i),
                               Gte(e, initial, i), first_iteration, sub));
    elements.push_back(element);
  }
  return Tuple(e, std::move(elements));
}

absl::StatusOr<std::vector<Cotangent>> WhileTranspose(const Instruction& inst, const Cotangent& ct,
                                                      TransposeContext& ctx) {
  ASSIGN_OR_RETURN(ForiLoop loop, MatchForiLoop(inst));
  const Computation& body = *inst.attr_computation("body");
  const LinearTree& tree = ctx.Linearity(&inst);
  const Instruction* root = ResolveTupleElements(body.root());
  const int64_t m = inst.shape().tuple_size();
  ASSIGN_OR_RETURN(TransposedCallee t, ctx.TransposeCallee(body, {tree}));
  Emitter& e = ctx.emitter();
  Module& module = ModuleOf(e);
  const Shape& carry = inst.shape();
  const Shape s32 = Shape::Scalar(PrimitiveType::kS32);
  const Shape reverse_shape = Shape::Tuple({s32, carry, carry});
  const PrimitiveType counter_type = carry.tuple_shape(loop.counter_index).type();

  Computation* reverse_body = NewComputation(module, body.name() + ".reverse");
  {
    Emitter b(reverse_body);
    Instruction* q = b.Add(Instruction::CreateParameter(0, "carry", reverse_shape), true);
    Instruction* r = Gte(b, q, 0);
    Instruction* x = Gte(b, q, 1);
    Instruction* c = Gte(b, q, 2);
    Instruction* iteration = Sub(b, ScalarOf(b, PrimitiveType::kS32, loop.trip_count - 1), r);
    Instruction* counter =
        Add(b, Convert(b, iteration, counter_type), ScalarOf(b, counter_type, loop.start));
    Instruction* first_iteration =
        Cmp(b, iteration, ScalarOf(b, PrimitiveType::kS32, 0), "EQ");
    std::vector<Instruction*> elements;
    for (int64_t j = 0; j < m; ++j) {
      if (j == loop.counter_index) {
        elements.push_back(counter);
        continue;
      }
      ASSIGN_OR_RETURN(Instruction * element,
                       BodyInput(b, inst, root->operand(j), tree.element(j), Gte(b, x, j),
                                 first_iteration, {j}));
      elements.push_back(element);
    }
    Instruction* cts = CallOf(b, t.computation, {Tuple(b, std::move(elements)), c});
    reverse_body->set_root(Tuple(
        b, {Add(b, r, ScalarOf(b, PrimitiveType::kS32, 1)), x, Gte(b, cts, 0)}));
  }
  Computation* reverse_cond = NewComputation(module, body.name() + ".reverse_condition");
  {
    Emitter b(reverse_cond);
    Instruction* q = b.Add(Instruction::CreateParameter(0, "carry", reverse_shape), true);
    reverse_cond->set_root(
        Cmp(b, Gte(b, q, 0), ScalarOf(b, PrimitiveType::kS32, loop.trip_count), "LT"));
  }
  ASSIGN_OR_RETURN(Instruction * primal, ctx.Primal(inst.operand(0)));
  Instruction* init =
      Tuple(e, {ScalarOf(e, PrimitiveType::kS32, 0), primal, ctx.Materialize(ct, carry)});
  Instruction* out = e.Add(Opcode::kWhile, reverse_shape, {init},
                           {{"condition", reverse_cond}, {"body", reverse_body}});
  return std::vector<Cotangent>{Cotangent::Of(Gte(e, out, 2))};
}

}  // namespace

void RegisterWhileTransposeRule(TransposeRuleRegistry& r) {
  r.Register(Opcode::kWhile, WhileTranspose);
}

}  // namespace sharc::autodiff
