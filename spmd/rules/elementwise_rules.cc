// Pointwise ops: one pass-through factor per dimension, shared by every
// operand of full rank and the result.
#include "spmd/sharding_rule.h"

#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/ops/collective_groups.h"

namespace sharc::spmd {

using hlo::Opcode;

void RegisterElementwiseRules(ShardingRuleRegistry& registry) {
  constexpr Opcode kPointwise[] = {
      Opcode::kAbs, Opcode::kAcos, Opcode::kAcosh, Opcode::kAsin, Opcode::kAsinh,
      Opcode::kAtanh, Opcode::kClz, Opcode::kCosh, Opcode::kErf, Opcode::kPopcnt,
      Opcode::kReducePrecision, Opcode::kSinh, Opcode::kCbrt, Opcode::kCeil, Opcode::kConvert, Opcode::kCopy,
      Opcode::kCos, Opcode::kExp, Opcode::kExpm1, Opcode::kFloor, Opcode::kIsFinite,
      Opcode::kLog, Opcode::kLog1p, Opcode::kLogistic, Opcode::kNegate, Opcode::kNot,
      Opcode::kRoundNearestAfz, Opcode::kRoundNearestEven, Opcode::kRsqrt, Opcode::kSign,
      Opcode::kSin, Opcode::kSqrt, Opcode::kTan, Opcode::kTanh,
      Opcode::kReal, Opcode::kImag, Opcode::kComplex, Opcode::kStochasticConvert,
      Opcode::kAdd, Opcode::kAnd, Opcode::kAtan2, Opcode::kClamp, Opcode::kCompare,
      Opcode::kDivide, Opcode::kMaximum, Opcode::kMinimum, Opcode::kMultiply, Opcode::kOr,
      Opcode::kPower, Opcode::kRemainder, Opcode::kSelect, Opcode::kShiftLeft,
      Opcode::kShiftRightArithmetic, Opcode::kShiftRightLogical, Opcode::kSubtract, Opcode::kXor,
  };
  for (Opcode op : kPointwise) {
    registry.Register(op, [](const hlo::Instruction& inst) -> absl::StatusOr<ShardingRule> {
      if (!inst.shape().is_array()) {
        ShardingRule rule;
        rule.kind = ShardingRule::Kind::kReplicated;
        rule.reason = "variadic form with a tuple result";
        return rule;
      }
      return PointwiseRule(inst);
    });
  }
  // An all-reduce of the program keeps shapes, but splitting it is the
  // identity only where each device reduces alone (no channel_id: over the
  // one replica, XLA's cross-replica all-reduce, which GSPMD partitions
  // elementwise). A cross-partition one adds the devices' whole values, as
  // GSPMD requires: it runs replicated (in manual regions it runs on each
  // device's value as it is, whatever the rule).
  registry.Register(Opcode::kAllReduce, [](const hlo::Instruction& inst)
                                            -> absl::StatusOr<ShardingRule> {
    const hlo::Module* module = inst.parent() == nullptr ? nullptr : inst.parent()->parent();
    const int64_t devices =
        module == nullptr ? 1 : module->config().num_partitions * module->config().replica_count;
    if (inst.shape().is_array() && hlo::IsSingletonCollective(inst, devices)) {
      return PointwiseRule(inst);
    }
    ShardingRule rule;
    rule.kind = ShardingRule::Kind::kReplicated;
    rule.reason = inst.shape().is_array()
                      ? "a cross-partition all-reduce adds each device's whole value"
                      : "variadic form with a tuple result";
    return rule;
  });
}

}  // namespace sharc::spmd
