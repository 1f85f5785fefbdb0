// JVP of select-and-scatter, max pooling's backward pass. Which operand
// element a window selects is piecewise constant in the operand, so only the
// source and the init value carry tangents; with an add scatter the op is
// linear in them (JAX's select_and_scatter_add JVP):
//
//   %y = select-and-scatter(%x, %s, %init), select=GE, scatter=add
//   dy = select-and-scatter(%x, ds, 0), select=GE, scatter=add + broadcast(dinit)
//
// Its transpose gathers the cotangent at the selected elements
// (transpose_rules/select_and_scatter.cc).
#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/reduction_rules.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {

bool ScattersByAdding(const Instruction& inst) {
  const Computation* scatter = inst.attr_computation("scatter");
  return scatter != nullptr && hlo::MatchBinaryReducer(*scatter) == Opcode::kAdd;
}

absl::StatusOr<Instruction*> SelectAndScatterJvp(const Instruction& inst, const JvpArgs& args,
                                                 JvpContext& ctx) {
  if (args.tangents[1] == nullptr && args.tangents[2] == nullptr) return nullptr;
  if (!ScattersByAdding(inst)) {
    return absl::UnimplementedError(
        absl::StrCat("unsupported: the derivative of a select-and-scatter whose scatter function "
                     "is not an add (it is then not linear in its source), in ",
                     inst.Describe()));
  }
  Emitter& t = ctx.tangent();
  Instruction* tangent = nullptr;
  if (args.tangents[1] != nullptr) {
    Instruction* zero = ScalarOf(t, inst.shape().type(), 0.0);
    tangent = t.Add(hlo::CloneWithOperands(inst, {ctx.Residual(args.primals[0]), args.tangents[1],
                                                  zero}));
  }
  if (args.tangents[2] != nullptr) {
    Instruction* init = BroadcastInDim(t, args.tangents[2], inst.shape(), {});
    tangent = tangent == nullptr ? init : Add(t, tangent, init);
  }
  return tangent;
}

}  // namespace sharc::autodiff
