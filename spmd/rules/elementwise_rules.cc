// Pointwise ops: one pass-through factor per dimension, shared by every
// operand of full rank and the result.
#include "spmd/sharding_rule.h"

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
      // Per-device collective that keeps shapes: each element reduces with
      // the same element on the other devices.
      Opcode::kAllReduce,
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
}

}  // namespace sharc::spmd
