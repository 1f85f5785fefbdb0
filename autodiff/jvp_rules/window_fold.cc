// The JVP of reduce-window with a general reducer: the fold the interpreter
// does, replayed on whole arrays. Starting from the init values, the k-th
// element of every window (a strided slice of the padded operand) is folded
// in for k = 0..K-1 in window order, through the reducer's own ops; padding
// and dilation holes are skipped with a select, as the interpreter skips
// them. The replay is exact for any reducer, associative or not, and costs K
// reducer applications over the output.
#include "autodiff/jvp_rules/reducer_application.h"
#include "autodiff/jvp_rules/reduction_rules.h"
#include "autodiff/jvp_rules/window_geometry.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {

absl::StatusOr<Instruction*> WindowFoldJvp(const Instruction& inst, const JvpArgs& args,
                                           JvpContext& ctx) {
  const size_t n = static_cast<size_t>(inst.operand_count() / 2);
  const WindowGeometry window = WindowGeometry::Of(inst);
  const std::vector<int64_t> out_dims = window.output_dims();
  ReducerApplication reducer(inst, ctx);
  ReductionState padded;
  ReductionState acc;
  for (size_t i = 0; i < n; ++i) {
    Instruction* x = args.primals[i];
    Instruction* init = args.primals[n + i];
    JvpValue p{window.Pad(ctx.primal(), x, init), nullptr};
    if (args.tangents[i] != nullptr) {
      // Holes never reach the fold, so what pads the tangent is immaterial.
      p.tangent = window.Pad(ctx.tangent(), args.tangents[i],
                             ScalarOf(ctx.tangent(), x->shape().type(), 0.0));
    }
    padded.push_back(p);
    acc.push_back(JvpValue{init, args.tangents[n + i]});
  }
  acc = reducer.Map(acc, [&](Emitter& e, Instruction* v) {
    return BroadcastInDim(e, v, Shape(v->shape().type(), out_dims), {});
  });
  for (int64_t k = 0; k < window.num_offsets(); ++k) {
    const std::vector<int64_t> offset = window.Offset(k);
    ReductionState element = reducer.Map(
        padded, [&](Emitter& e, Instruction* v) { return window.Element(e, v, offset); });
    ASSIGN_OR_RETURN(ReductionState next, reducer.Apply(acc, element));
    Instruction* valid = window.Valid(ctx.primal(), offset);
    acc = valid == nullptr ? std::move(next) : reducer.Select(valid, next, acc);
  }
  return reducer.ResultTangent(acc);
}

}  // namespace sharc::autodiff
