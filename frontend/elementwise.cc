#include "frontend/elementwise.h"

#include "absl/strings/str_cat.h"
#include "frontend/shape_ops.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend {
namespace {

using hlo::Opcode;

void ExpectSameDType(const Tensor& a, const Tensor& b, const std::string& what,
                     const std::source_location& loc) {
  if (a.dtype() != b.dtype()) {
    ThrowTraceError(loc, absl::StrCat(what, ": operands ", a.ToString(), " and ", b.ToString(),
                                      " have different element types (convert one with astype)"));
  }
}

Tensor Compare(const char* direction, const Tensor& a, const Tensor& b,
               const std::source_location& loc) {
  ExpectSameDType(a, b, "compare", loc);
  std::vector<int64_t> dims = BroadcastShapes(a.dims(), b.dims(), loc);
  Tensor x = broadcast_to(a, dims, loc), y = broadcast_to(b, dims, loc);
  return Emit(Opcode::kCompare, {x, y}, {{"direction", std::string(direction)}}, std::nullopt,
              loc);
}

}  // namespace

Tensor BinaryOp(Opcode opcode, const Tensor& a, const Tensor& b, std::source_location loc) {
  ExpectSameDType(a, b, hlo::OpcodeName(opcode), loc);
  std::vector<int64_t> dims = BroadcastShapes(a.dims(), b.dims(), loc);
  return Emit(opcode, {broadcast_to(a, dims, loc), broadcast_to(b, dims, loc)}, {}, std::nullopt,
              loc);
}

Tensor UnaryOp(Opcode opcode, const Tensor& x, std::source_location loc) {
  return Emit(opcode, {x}, {}, std::nullopt, loc);
}

Tensor ScalarLike(double value, const Tensor& like, std::source_location loc) {
  hlo::Literal literal(hlo::Shape::Scalar(like.dtype()));
  literal.SetFromDouble(0, value);
  // Scalars stay rank 0: the binary op broadcasts them once, next to the use.
  return Constant(std::move(literal), loc);
}

Tensor operator+(Located a, const Tensor& b) { return BinaryOp(Opcode::kAdd, a.tensor, b, a.loc); }
Tensor operator-(Located a, const Tensor& b) {
  return BinaryOp(Opcode::kSubtract, a.tensor, b, a.loc);
}
Tensor operator*(Located a, const Tensor& b) {
  return BinaryOp(Opcode::kMultiply, a.tensor, b, a.loc);
}
Tensor operator/(Located a, const Tensor& b) {
  return BinaryOp(Opcode::kDivide, a.tensor, b, a.loc);
}
Tensor operator+(Located a, double b) {
  return BinaryOp(Opcode::kAdd, a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator-(Located a, double b) {
  return BinaryOp(Opcode::kSubtract, a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator*(Located a, double b) {
  return BinaryOp(Opcode::kMultiply, a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator/(Located a, double b) {
  return BinaryOp(Opcode::kDivide, a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator+(double a, Located b) {
  return BinaryOp(Opcode::kAdd, ScalarLike(a, b.tensor, b.loc), b.tensor, b.loc);
}
Tensor operator-(double a, Located b) {
  return BinaryOp(Opcode::kSubtract, ScalarLike(a, b.tensor, b.loc), b.tensor, b.loc);
}
Tensor operator*(double a, Located b) {
  return BinaryOp(Opcode::kMultiply, ScalarLike(a, b.tensor, b.loc), b.tensor, b.loc);
}
Tensor operator/(double a, Located b) {
  return BinaryOp(Opcode::kDivide, ScalarLike(a, b.tensor, b.loc), b.tensor, b.loc);
}
Tensor operator-(Located x) { return UnaryOp(Opcode::kNegate, x.tensor, x.loc); }

Tensor operator<(Located a, const Tensor& b) { return Compare("LT", a.tensor, b, a.loc); }
Tensor operator<=(Located a, const Tensor& b) { return Compare("LE", a.tensor, b, a.loc); }
Tensor operator>(Located a, const Tensor& b) { return Compare("GT", a.tensor, b, a.loc); }
Tensor operator>=(Located a, const Tensor& b) { return Compare("GE", a.tensor, b, a.loc); }
Tensor operator==(Located a, const Tensor& b) { return Compare("EQ", a.tensor, b, a.loc); }
Tensor operator!=(Located a, const Tensor& b) { return Compare("NE", a.tensor, b, a.loc); }
Tensor operator<(Located a, double b) {
  return Compare("LT", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator<=(Located a, double b) {
  return Compare("LE", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator>(Located a, double b) {
  return Compare("GT", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator>=(Located a, double b) {
  return Compare("GE", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator==(Located a, double b) {
  return Compare("EQ", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}
Tensor operator!=(Located a, double b) {
  return Compare("NE", a.tensor, ScalarLike(b, a.tensor, a.loc), a.loc);
}

Tensor add(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kAdd, a, b, loc);
}
Tensor subtract(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kSubtract, a, b, loc);
}
Tensor multiply(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kMultiply, a, b, loc);
}
Tensor divide(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kDivide, a, b, loc);
}
Tensor maximum(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kMaximum, a, b, loc);
}
Tensor maximum(const Tensor& a, double b, std::source_location loc) {
  return BinaryOp(Opcode::kMaximum, a, ScalarLike(b, a, loc), loc);
}
Tensor minimum(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kMinimum, a, b, loc);
}
Tensor minimum(const Tensor& a, double b, std::source_location loc) {
  return BinaryOp(Opcode::kMinimum, a, ScalarLike(b, a, loc), loc);
}
Tensor pow(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kPower, a, b, loc);
}
Tensor pow(const Tensor& a, double b, std::source_location loc) {
  return BinaryOp(Opcode::kPower, a, ScalarLike(b, a, loc), loc);
}

Tensor equal(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("EQ", a, b, loc);
}
Tensor not_equal(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("NE", a, b, loc);
}
Tensor less(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("LT", a, b, loc);
}
Tensor less_equal(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("LE", a, b, loc);
}
Tensor greater(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("GT", a, b, loc);
}
Tensor greater_equal(const Tensor& a, const Tensor& b, std::source_location loc) {
  return Compare("GE", a, b, loc);
}
Tensor logical_and(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kAnd, a, b, loc);
}
Tensor logical_or(const Tensor& a, const Tensor& b, std::source_location loc) {
  return BinaryOp(Opcode::kOr, a, b, loc);
}
Tensor logical_not(const Tensor& x, std::source_location loc) {
  return UnaryOp(Opcode::kNot, x, loc);
}

Tensor neg(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kNegate, x, loc); }
Tensor abs(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kAbs, x, loc); }
Tensor sign(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kSign, x, loc); }
Tensor exp(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kExp, x, loc); }
Tensor log(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kLog, x, loc); }
Tensor tanh(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kTanh, x, loc); }
Tensor logistic(const Tensor& x, std::source_location loc) {
  return UnaryOp(Opcode::kLogistic, x, loc);
}
Tensor sqrt(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kSqrt, x, loc); }
Tensor rsqrt(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kRsqrt, x, loc); }
Tensor sin(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kSin, x, loc); }
Tensor cos(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kCos, x, loc); }
Tensor floor(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kFloor, x, loc); }
Tensor ceil(const Tensor& x, std::source_location loc) { return UnaryOp(Opcode::kCeil, x, loc); }

Tensor where(const Tensor& condition, const Tensor& on_true, const Tensor& on_false,
             std::source_location loc) {
  if (condition.dtype() != pred) {
    ThrowTraceError(loc, absl::StrCat("where: the condition must be pred, got ",
                                      condition.ToString()));
  }
  ExpectSameDType(on_true, on_false, "where", loc);
  std::vector<int64_t> dims = BroadcastShapes(
      BroadcastShapes(condition.dims(), on_true.dims(), loc), on_false.dims(), loc);
  return Emit(Opcode::kSelect,
              {broadcast_to(condition, dims, loc), broadcast_to(on_true, dims, loc),
               broadcast_to(on_false, dims, loc)},
              {}, std::nullopt, loc);
}
Tensor where(const Tensor& condition, const Tensor& on_true, double on_false,
             std::source_location loc) {
  return where(condition, on_true, ScalarLike(on_false, on_true, loc), loc);
}
Tensor where(const Tensor& condition, double on_true, const Tensor& on_false,
             std::source_location loc) {
  return where(condition, ScalarLike(on_true, on_false, loc), on_false, loc);
}
Tensor select(const Tensor& condition, const Tensor& on_true, const Tensor& on_false,
              std::source_location loc) {
  return where(condition, on_true, on_false, loc);
}

Tensor astype(const Tensor& x, DType dtype, std::source_location loc) {
  if (x.dtype() == dtype) return x;
  return Emit(Opcode::kConvert, {x}, {}, hlo::Shape(dtype, x.dims()), loc);
}

}  // namespace sharc::frontend
