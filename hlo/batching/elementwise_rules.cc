// Elementwise ops (unary, binary, compare, convert, select, clamp): the batch
// dim is one more elementwise dim. Unbatched operands are broadcast; a scalar
// predicate of select or scalar bound of clamp stays scalar when unbatched
// and is broadcast along the value's dims when batched.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<BatchedValue> BatchElementwise(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const Shape& result = inst.shape();
  std::vector<Instruction*> new_operands;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const BatchedValue& v = operands[static_cast<size_t>(i)];
    const Shape& original = inst.operand(i)->shape();
    const bool implicit_scalar = original.is_scalar() && !result.is_scalar();
    Instruction* op = v.inst;
    if (v.batched.batched()) {
      if (implicit_scalar) {
        // [B] -> [B, ...result dims], one value per slice.
        op = Broadcast(e, op, BatchedShape(Shape(original.type(), result.dims()), b), {0});
      }
    } else if (!implicit_scalar) {
      op = BroadcastToBatch(e, op, b);
    }
    new_operands.push_back(op);
  }
  auto batched = CloneWithOperands(inst, std::move(new_operands));
  batched->set_shape(BatchedShape(result, b));
  batched->clear_sharding();
  return BatchedValue{e.Add(std::move(batched)), BatchTree::Leaf(true)};
}

}  // namespace

void RegisterElementwiseBatchingRules(BatchingRuleRegistry& registry) {
  for (Opcode op : {// Unary.
                    Opcode::kAbs, Opcode::kAcos, Opcode::kAcosh, Opcode::kAsin,
                    Opcode::kAsinh, Opcode::kAtanh, Opcode::kClz, Opcode::kCosh, Opcode::kErf,
                    Opcode::kPopcnt, Opcode::kReducePrecision, Opcode::kSinh, Opcode::kCbrt, Opcode::kCeil, Opcode::kConvert, Opcode::kCopy,
                    Opcode::kCos, Opcode::kExp, Opcode::kExpm1, Opcode::kFloor, Opcode::kIsFinite,
                    Opcode::kLog, Opcode::kLog1p, Opcode::kLogistic, Opcode::kNegate, Opcode::kNot,
                    Opcode::kRoundNearestAfz, Opcode::kRoundNearestEven, Opcode::kRsqrt,
                    Opcode::kSign, Opcode::kSin, Opcode::kSqrt, Opcode::kTan, Opcode::kTanh,
                    Opcode::kReal, Opcode::kImag,
                    // Binary and ternary.
                    Opcode::kAdd, Opcode::kAnd, Opcode::kAtan2, Opcode::kClamp, Opcode::kCompare,
                    Opcode::kDivide, Opcode::kMaximum, Opcode::kMinimum, Opcode::kMultiply,
                    Opcode::kOr, Opcode::kPower, Opcode::kRemainder, Opcode::kSelect,
                    Opcode::kShiftLeft, Opcode::kShiftRightArithmetic, Opcode::kShiftRightLogical,
                    Opcode::kSubtract, Opcode::kXor, Opcode::kComplex,
                    Opcode::kStochasticConvert}) {
    registry.Register(op, BatchElementwise);
  }
}

}  // namespace sharc::hlo
