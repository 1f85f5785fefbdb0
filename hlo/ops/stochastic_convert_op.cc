// stochastic-convert(x, random): converts floats to a signed integer type,
// rounding |x| up with probability equal to its fractional part: up when
// random (an unsigned integer of x's bit width) is below fraction * 2^bits,
// as XLA's StochasticConvertDecomposer computes it; the sign is put back
// after, and values at or beyond the type's range saturate.
//
//   %q = s8[4] stochastic-convert(f32[4] %x, u32[4] %bits)
//   x = {1.25, -1.25, 300, nan}, bits = {2^29, 2^31, 0, 0} -> {2, -1, 127, 0}
//
// XLA converts only to signed integers; so does sharc (other result types
// are refused by shape inference). NaN converts to 0.
#include <cmath>
#include <limits>

#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferStochasticConvert(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& x = inst.operand(0)->shape();
  const Shape& random = inst.operand(1)->shape();
  if (!IsFloatingPoint(x.type())) {
    return OpError(inst, "converts floating-point values, got ", x.ToString());
  }
  if (!IsUnsignedInteger(random.type()) || ByteWidth(random.type()) != ByteWidth(x.type()) ||
      random.dims() != x.dims()) {
    return OpError(inst, "needs random bits of an unsigned type as wide as ",
                   PrimitiveTypeName(x.type()), " and of its dims, got ", random.ToString());
  }
  const Shape& out = inst.shape();
  if (!out.is_array()) return OpError(inst, "needs its (array) result shape written");
  if (!IsSignedInteger(out.type())) {
    return OpError(inst, "converts to signed integer types only (as XLA does), not ",
                   PrimitiveTypeName(out.type()));
  }
  return Shape(out.type(), x.dims());
}

absl::StatusOr<Literal> EvaluateStochasticConvert(const Instruction& inst,
                                                  absl::Span<const Literal* const> operands,
                                                  EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferStochasticConvert(inst));
  const Literal& x = *operands[0];
  const Literal& random = *operands[1];
  const int bits = static_cast<int>(ByteWidth(shape.type()) * 8);
  const double min = -std::ldexp(1.0, bits - 1);
  const double max = std::ldexp(1.0, bits - 1) - 1;
  const int random_bits = static_cast<int>(ByteWidth(random.shape().type()) * 8);
  Literal out(shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const double v = x.GetAsDouble(i);
    int64_t result = 0;
    if (std::isnan(v)) {
      result = 0;
    } else if (v <= min) {
      result = static_cast<int64_t>(min);
    } else if (v >= max) {
      result = static_cast<int64_t>(max);
    } else {
      const double magnitude = std::fabs(v);
      const double truncated = std::floor(magnitude);
      // fraction * 2^bits as the random type (the fraction is < 1, so it fits).
      const uint64_t threshold =
          static_cast<uint64_t>(std::ldexp(magnitude - truncated, random_bits));
      const uint64_t r = static_cast<uint64_t>(random.GetAsInt64(i)) &
                         (random_bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << random_bits) - 1));
      result = static_cast<int64_t>(truncated) + (r < threshold ? 1 : 0);
      if (v < 0) result = -result;
    }
    out.SetFromInt64(i, result);
  }
  return out;
}

}  // namespace

void RegisterStochasticConvertOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kStochasticConvert;
  def.min_operands = 2;
  def.max_operands = 2;
  def.infer_shape = InferStochasticConvert;
  def.evaluate = EvaluateStochasticConvert;
  def.traits.elementwise = true;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
