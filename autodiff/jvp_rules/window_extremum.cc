// JVP of max and min pooling (reduce-window with a maximum or minimum
// reducer). Each output's tangent is the tangent of the element that won its
// window: the first extremal element in window order, the one XLA's
// select-and-scatter picks with GE (LE for min). Ties thus go to one element,
// not split as for reduce, so the gradient of max pooling matches XLA's.
//
// The winner is found on the primal side by scanning the K positions of the
// window (K strided slices of the padded operand); the tangent side reads
// back only its index, so reverse mode saves one s32 per output. The init
// value competes first and keeps the win unless an element beats it
// strictly; padding and dilation holes hold the init value and so never win.
#include "autodiff/jvp_rules/reduction_rules.h"
#include "autodiff/jvp_rules/window_geometry.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::autodiff {

absl::StatusOr<Instruction*> WindowExtremumJvp(const Instruction& inst, Opcode reducer,
                                               const JvpArgs& args, JvpContext& ctx) {
  const Shape& out = inst.shape();
  if (!hlo::IsFloatingPoint(out.type())) return nullptr;
  const WindowGeometry window = WindowGeometry::Of(inst);
  const char* beats = reducer == Opcode::kMaximum ? "GT" : "LT";
  const Shape index_shape(PrimitiveType::kS32, out.dims());

  Emitter& p = ctx.primal();
  Instruction* padded = window.Pad(p, args.primals[0], args.primals[1]);
  Instruction* best = BroadcastInDim(p, args.primals[1], out, {});
  Instruction* winner = Full(p, index_shape, -1);  // -1: the init value
  for (int64_t k = 0; k < window.num_offsets(); ++k) {
    Instruction* candidate = window.Element(p, padded, window.Offset(k));
    Instruction* better = Cmp(p, candidate, best, beats);
    best = Select(p, better, candidate, best);
    winner = Select(p, better, Full(p, index_shape, static_cast<double>(k)), winner);
  }

  Emitter& t = ctx.tangent();
  Instruction* won = ctx.Residual(winner);
  Instruction* tangent = nullptr;
  if (args.tangents[0] != nullptr) {
    Instruction* padded_tangent = window.Pad(t, args.tangents[0], ScalarOf(t, out.type(), 0.0));
    tangent = window.AtOffsets(t, padded_tangent, won);
  }
  if (args.tangents[1] != nullptr) {
    Instruction* init_won = Cmp(t, won, Full(t, index_shape, -1), "EQ");
    Instruction* term =
        Select(t, init_won, BroadcastInDim(t, args.tangents[1], out, {}), Zeros(t, out));
    tangent = tangent == nullptr ? term : Add(t, tangent, term);
  }
  return tangent;
}

}  // namespace sharc::autodiff
