// JVP rules of the MapReduce blocks (DrJAX / FAX, reference section 1.4):
// broadcast, sum and mean are linear, so the tangent goes through the same
// block; map linearizes its body, mapping the primal part (which also returns
// each group's residuals) and then the linear part over the tangents. The
// derivative of a MapReduce program is therefore a MapReduce program.
#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {
namespace {

// `shape` with `groups` prepended to every leaf.
Shape Placed(const Shape& shape, int64_t groups) {
  if (shape.is_tuple()) {
    std::vector<Shape> leaves;
    for (const Shape& s : shape.tuple_shapes()) leaves.push_back(Placed(s, groups));
    return Shape::Tuple(std::move(leaves));
  }
  std::vector<int64_t> dims = {groups};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

absl::StatusOr<JvpValue> MapJvp(const Instruction& inst, const JvpArgs& args, JvpContext& ctx) {
  const Computation& f = *inst.attr_computation("to_apply");
  const int64_t groups = inst.shape().is_tuple() ? inst.shape().tuple_shape(0).dim(0)
                                                  : inst.shape().dim(0);
  std::vector<bool> differentiable;
  for (Instruction* t : args.tangents) differentiable.push_back(t != nullptr);
  ASSIGN_OR_RETURN(LinearizedCallee lc, ctx.LinearizeCallee(f, differentiable));
  const hlo::AttrValue placement = inst.attr_string("placement");
  Emitter& p = ctx.primal();
  Instruction* joint = p.Add(Opcode::kMapReduceMap, Placed(lc.primal->root()->shape(), groups),
                             args.primals, {{"placement", placement}, {"to_apply", lc.primal}});
  JvpValue out;
  if (lc.tuple_output) {
    std::vector<Instruction*> ys;
    for (int64_t i = 0; i < lc.num_outputs; ++i) ys.push_back(Gte(p, joint, i));
    out.primal = Tuple(p, std::move(ys));
  } else {
    out.primal = Gte(p, joint, 0);
  }
  Emitter& t = ctx.tangent();
  std::vector<Instruction*> operands;
  for (Instruction* t : args.tangents) {
    if (t != nullptr) operands.push_back(t);
  }
  for (int64_t k = 0; k < lc.num_residuals; ++k) {
    operands.push_back(ctx.Residual(Gte(p, joint, lc.num_outputs + k)));
  }
  out.tangent = t.Add(Opcode::kMapReduceMap, inst.shape(), std::move(operands),
                      {{"placement", placement}, {"to_apply", lc.linear}});
  return out;
}

}  // namespace

void RegisterMapReduceJvpRules(JvpRuleRegistry& r) {
  for (Opcode op : {Opcode::kMapReduceBroadcast, Opcode::kMapReduceSum, Opcode::kMapReduceMean}) {
    r.Register(op, LinearIn({}));
  }
  r.RegisterPrimalAndTangent(Opcode::kMapReduceMap, MapJvp);
}

}  // namespace sharc::autodiff
