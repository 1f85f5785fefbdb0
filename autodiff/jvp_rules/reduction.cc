// JVP rules of dot and the reductions. dot and sums are (bi)linear; max/min
// reductions send the tangent of the elements that attain the extremum
// (averaged over ties, as JAX does); max/min pooling and reductions with
// other reducers have rules of their own (reduction_rules.h).
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "autodiff/jvp_rules/reduction_rules.h"
#include "autodiff/linearizer.h"
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
  if (!CarriesTangent(inst.shape())) return nullptr;
  std::optional<Opcode> op = ReducerOp(inst);
  if (inst.operand_count() != 2 ||
      (op != Opcode::kAdd && op != Opcode::kMaximum && op != Opcode::kMinimum)) {
    return ReduceTreeJvp(inst, a, ctx);
  }
  if (*op == Opcode::kAdd) return SameOpOnTangents(inst, a, ctx, {true, true});
  // Every element equal to the extremum shares its tangent, and so does the
  // init value when it attains it (an init that is differentiated, rare, is
  // one more candidate).
  Emitter& p = ctx.primal();
  Emitter& t = ctx.tangent();
  Instruction* x = a.primals[0];
  const PrimitiveType type = x->shape().type();
  const IntList& dims = inst.attr_ints("dimensions");
  IntList kept = KeptDims(x->shape().rank(), dims);
  Instruction* hit =
      Convert(p, Cmp(p, x, BroadcastInDim(p, a.result, x->shape(), kept), "EQ"), type);
  Instruction* count = ReduceSum(p, hit, dims);
  Instruction* init_hit = nullptr;
  if (a.tangents[1] != nullptr) {
    init_hit = Convert(p, Cmp(p, BroadcastInDim(p, a.primals[1], inst.shape(), {}), a.result, "EQ"),
                       type);
    count = Add(p, count, init_hit);
  }
  count = Binary(p, Opcode::kMaximum, count, Full(p, count->shape(), 1.0));
  Instruction* tangent = nullptr;
  if (a.tangents[0] != nullptr) {
    Instruction* weight = Div(p, hit, BroadcastInDim(p, count, x->shape(), kept));
    tangent = ReduceSum(t, Mul(t, a.tangents[0], ctx.Residual(weight)), dims);
  }
  if (init_hit != nullptr) {
    Instruction* term = Mul(t, BroadcastInDim(t, a.tangents[1], inst.shape(), {}),
                            ctx.Residual(Div(p, init_hit, count)));
    tangent = tangent == nullptr ? term : Add(t, tangent, term);
  }
  return tangent;
}

// d(a.b) = ta.b + a.tb for an op linear in each operand separately (dot,
// convolution): the same op with one operand replaced by its tangent.
absl::StatusOr<Instruction*> BilinearJvp(const Instruction& inst, const JvpArgs& a,
                                         JvpContext& ctx) {
  Instruction* out = nullptr;
  if (a.tangents[0] != nullptr) out = SameOpOnTangents(inst, a, ctx, {true, false});
  if (a.tangents[1] != nullptr) {
    Instruction* term = SameOpOnTangents(inst, a, ctx, {false, true});
    out = out == nullptr ? term : Add(ctx.tangent(), out, term);
  }
  return out;
}

// ragged-dot is bilinear in its first two operands; its group sizes are
// integers, with no tangent.
absl::StatusOr<Instruction*> RaggedDotJvp(const Instruction& inst, const JvpArgs& a,
                                          JvpContext& ctx) {
  Instruction* out = nullptr;
  if (a.tangents[0] != nullptr) out = SameOpOnTangents(inst, a, ctx, {true, false, false});
  if (a.tangents[1] != nullptr) {
    Instruction* term = SameOpOnTangents(inst, a, ctx, {false, true, false});
    out = out == nullptr ? term : Add(ctx.tangent(), out, term);
  }
  return out;
}

}  // namespace

void RegisterReductionJvpRules(JvpRuleRegistry& r) {
  r.Register(Opcode::kDot, BilinearJvp);
  r.Register(Opcode::kConvolution, BilinearJvp);
  r.Register(Opcode::kRaggedDot, RaggedDotJvp);
  r.Register(Opcode::kReduce, ReduceJvp);
  r.Register(Opcode::kSelectAndScatter, SelectAndScatterJvp);
  r.Register(Opcode::kReduceWindow, [](const Instruction& inst, const JvpArgs& a,
                                       JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    if (!CarriesTangent(inst.shape())) return nullptr;
    std::optional<Opcode> op = ReducerOp(inst);
    if (inst.operand_count() != 2) return WindowFoldJvp(inst, a, ctx);
    if (op == Opcode::kAdd) return SameOpOnTangents(inst, a, ctx, {true, true});
    if (op == Opcode::kMaximum || op == Opcode::kMinimum) {
      return WindowExtremumJvp(inst, *op, a, ctx);
    }
    return WindowFoldJvp(inst, a, ctx);
  });
}

}  // namespace sharc::autodiff
