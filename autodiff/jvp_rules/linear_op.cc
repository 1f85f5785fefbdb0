#include "autodiff/jvp_rules/linear_op.h"

#include "hlo/batching/batch_util.h"

namespace sharc::autodiff {

Instruction* SameOpOnTangents(const Instruction& inst, const JvpArgs& args, JvpContext& ctx,
                              const std::vector<bool>& linear) {
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    operands.push_back(linear[static_cast<size_t>(i)] ? args.TangentOrZeros(ctx, i)
                                                      : ctx.Residual(args.primals[i]));
  }
  return ctx.tangent().Add(hlo::CloneWithOperands(inst, std::move(operands)));
}

TangentFn LinearIn(std::vector<int64_t> residual_operands, int64_t residuals_from) {
  return [residual_operands, residuals_from](const Instruction& inst, const JvpArgs& args,
                                             JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    std::vector<bool> linear(static_cast<size_t>(inst.operand_count()), true);
    for (int64_t i : residual_operands) linear[static_cast<size_t>(i)] = false;
    if (residuals_from >= 0) {
      for (int64_t i = residuals_from; i < inst.operand_count(); ++i) {
        linear[static_cast<size_t>(i)] = false;
      }
    }
    return SameOpOnTangents(inst, args, ctx, linear);
  };
}

}  // namespace sharc::autodiff
