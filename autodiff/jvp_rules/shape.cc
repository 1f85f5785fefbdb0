// JVP rules of the data-movement ops: all are linear in the data they move,
// so the tangent moves the same way; indices are residuals.
#include "autodiff/jvp_rules/linear_op.h"
#include "autodiff/jvp_rules/scatter_combiner.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {

void RegisterShapeJvpRules(JvpRuleRegistry& r) {
  for (Opcode op : {Opcode::kBroadcast, Opcode::kReshape, Opcode::kTranspose, Opcode::kSlice,
                    Opcode::kReverse, Opcode::kConcatenate, Opcode::kPad}) {
    r.Register(op, LinearIn({}));
  }
  r.Register(Opcode::kDynamicSlice, LinearIn({}, /*residuals_from=*/1));
  r.Register(Opcode::kDynamicUpdateSlice, LinearIn({}, /*residuals_from=*/2));
  r.Register(Opcode::kGather, LinearIn({1}));
  r.Register(Opcode::kScatter, [](const Instruction& inst, const JvpArgs& args,
                                  JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    // Adding and overwriting are linear in (operand, updates), so the tangent
    // is scattered the same way (with duplicate indices, the same update wins
    // an overwrite as in the primal: the op and the indices are the same).
    if (inst.operand_count() != 3) {
      return hlo::OpError(inst, "is not differentiable: autodiff handles scatter of one operand, "
                                "not a variadic scatter of ", (inst.operand_count() - 1) / 2);
    }
    const Computation& combiner = *inst.attr_computation("to_apply");
    if (ClassifyScatterCombiner(combiner) == ScatterCombiner::kOther) {
      return hlo::OpError(inst, "is not differentiable: its combiner %", combiner.name(),
                          " neither adds nor overwrites (autodiff handles scatter-add and "
                          "scatter with a `ROOT update` combiner)");
    }
    return SameOpOnTangents(inst, args, ctx, {true, false, true});
  });
}

}  // namespace sharc::autodiff
