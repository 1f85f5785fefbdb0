// JVP rules of dot and the reductions. dot and sums are (bi)linear; max/min
// reductions send the tangent of the elements that attain the extremum
// (averaged over ties, as JAX does).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

// The binary op of a scalar reducer `ROOT op(p0, p1)`, if it is one.
std::optional<Opcode> ReducerOp(const Instruction& inst) {
  const Computation* reducer = inst.attr_computation("to_apply");
  if (reducer == nullptr) return std::nullopt;
  return hlo::MatchBinaryReducer(*reducer);
}

IntList KeptDims(int64_t rank, const IntList& reduced) {
  IntList kept;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  return kept;
}

absl::StatusOr<Instruction*> ReduceJvp(const Instruction& inst, const JvpArgs& a,
                                       JvpContext& ctx) {
  std::optional<Opcode> op = ReducerOp(inst);
  if (inst.operand_count() != 2 || !op.has_value()) {
    return hlo::OpError(inst, "is differentiable only as a single-operand sum, max or min "
                              "reduction (its reducer is not one of add, maximum, minimum)");
  }
  if (!hlo::IsFloatingPoint(inst.shape().type())) return nullptr;
  if (*op == Opcode::kAdd) return SameOpOnTangents(inst, a, ctx, {true, true});
  if (*op != Opcode::kMaximum && *op != Opcode::kMinimum) {
    return hlo::OpError(inst, "is differentiable only as a sum, max or min reduction, not with a ",
                        hlo::OpcodeName(*op), " reducer");
  }
  if (a.tangents[0] == nullptr) return nullptr;
  Emitter& p = ctx.primal();
  Instruction* x = a.primals[0];
  const IntList& dims = inst.attr_ints("dimensions");
  IntList kept = KeptDims(x->shape().rank(), dims);
  Instruction* hit = Convert(p, Cmp(p, x, BroadcastInDim(p, a.result, x->shape(), kept), "EQ"),
                             x->shape().type());
  Instruction* count = ReduceSum(p, hit, dims);
  count = Binary(p, Opcode::kMaximum, count, Full(p, count->shape(), 1.0));
  Instruction* weight = Div(p, hit, BroadcastInDim(p, count, x->shape(), kept));
  Emitter& t = ctx.tangent();
  return ReduceSum(t, Mul(t, a.tangents[0], ctx.Residual(weight)), dims);
}

}  // namespace

void RegisterReductionJvpRules(JvpRuleRegistry& r) {
  // d(a.b) = ta.b + a.tb.
  r.Register(Opcode::kDot, [](const Instruction& inst, const JvpArgs& a,
                              JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Instruction* out = nullptr;
    if (a.tangents[0] != nullptr) out = SameOpOnTangents(inst, a, ctx, {true, false});
    if (a.tangents[1] != nullptr) {
      Instruction* term = SameOpOnTangents(inst, a, ctx, {false, true});
      out = out == nullptr ? term : Add(ctx.tangent(), out, term);
    }
    return out;
  });
  r.Register(Opcode::kReduce, ReduceJvp);
  r.Register(Opcode::kReduceWindow, [](const Instruction& inst, const JvpArgs& a,
                                       JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    std::optional<Opcode> op = ReducerOp(inst);
    if (inst.operand_count() != 2 || op != Opcode::kAdd) {
      return hlo::OpError(inst, "is differentiable only as a single-operand windowed sum "
                                "(max pooling needs select-and-scatter, which sharc lacks)");
    }
    if (!hlo::IsFloatingPoint(inst.shape().type())) return nullptr;
    return SameOpOnTangents(inst, a, ctx, {true, true});
  });
}

}  // namespace sharc::autodiff
