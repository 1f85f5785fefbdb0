// Elementwise Tensor operations with numpy semantics: arithmetic, math
// functions, comparisons (pred results), select, casts. Operands of different
// shapes broadcast by numpy's rules; a C++ number next to a Tensor becomes a
// constant of the Tensor's dtype (JAX's weakly typed Python scalars), while
// two Tensors must already share a dtype (astype converts).
#pragma once

#include <source_location>

#include "frontend/tensor.h"
#include "hlo/ir/opcode.h"

namespace sharc::frontend {

// An operand of an operator together with the operator's call site.
// Operators cannot take a defaulted std::source_location parameter, but a
// converting constructor's default argument is evaluated where the conversion
// happens: in the user's expression.
struct Located {
  Located(const Tensor& tensor, std::source_location loc = std::source_location::current())
      : tensor(tensor), loc(loc) {}
  const Tensor& tensor;
  std::source_location loc;
};

// Generic forms: `opcode` applied after broadcasting the operands.
Tensor BinaryOp(hlo::Opcode opcode, const Tensor& a, const Tensor& b,
                std::source_location loc = std::source_location::current());
Tensor UnaryOp(hlo::Opcode opcode, const Tensor& x,
               std::source_location loc = std::source_location::current());
// A rank-0 constant of `like`'s dtype (the binary op broadcasts it).
Tensor ScalarLike(double value, const Tensor& like,
                  std::source_location loc = std::source_location::current());

Tensor operator+(Located a, const Tensor& b);
Tensor operator-(Located a, const Tensor& b);
Tensor operator*(Located a, const Tensor& b);
Tensor operator/(Located a, const Tensor& b);
Tensor operator+(Located a, double b);
Tensor operator-(Located a, double b);
Tensor operator*(Located a, double b);
Tensor operator/(Located a, double b);
Tensor operator+(double a, Located b);
Tensor operator-(double a, Located b);
Tensor operator*(double a, Located b);
Tensor operator/(double a, Located b);
Tensor operator-(Located x);

// Comparisons give pred Tensors.
Tensor operator<(Located a, const Tensor& b);
Tensor operator<=(Located a, const Tensor& b);
Tensor operator>(Located a, const Tensor& b);
Tensor operator>=(Located a, const Tensor& b);
Tensor operator==(Located a, const Tensor& b);
Tensor operator!=(Located a, const Tensor& b);
Tensor operator<(Located a, double b);
Tensor operator<=(Located a, double b);
Tensor operator>(Located a, double b);
Tensor operator>=(Located a, double b);
Tensor operator==(Located a, double b);
Tensor operator!=(Located a, double b);

#define SHARC_FRONTEND_LOC std::source_location loc = std::source_location::current()
Tensor add(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor subtract(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor multiply(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor divide(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor maximum(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor maximum(const Tensor& a, double b, SHARC_FRONTEND_LOC);
Tensor minimum(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor minimum(const Tensor& a, double b, SHARC_FRONTEND_LOC);
Tensor pow(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor pow(const Tensor& a, double b, SHARC_FRONTEND_LOC);

Tensor equal(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor not_equal(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor less(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor less_equal(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor greater(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor greater_equal(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor logical_and(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor logical_or(const Tensor& a, const Tensor& b, SHARC_FRONTEND_LOC);
Tensor logical_not(const Tensor& x, SHARC_FRONTEND_LOC);

Tensor neg(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor abs(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor sign(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor exp(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor log(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor tanh(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor logistic(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor sqrt(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor rsqrt(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor sin(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor cos(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor floor(const Tensor& x, SHARC_FRONTEND_LOC);
Tensor ceil(const Tensor& x, SHARC_FRONTEND_LOC);

// select: `condition` (pred) picks `on_true` or `on_false`; all three
// broadcast together.
Tensor where(const Tensor& condition, const Tensor& on_true, const Tensor& on_false,
             SHARC_FRONTEND_LOC);
Tensor where(const Tensor& condition, const Tensor& on_true, double on_false, SHARC_FRONTEND_LOC);
Tensor where(const Tensor& condition, double on_true, const Tensor& on_false, SHARC_FRONTEND_LOC);
Tensor select(const Tensor& condition, const Tensor& on_true, const Tensor& on_false,
              SHARC_FRONTEND_LOC);

// Element type conversion (a no-op for the same dtype).
Tensor astype(const Tensor& x, DType dtype, SHARC_FRONTEND_LOC);
#undef SHARC_FRONTEND_LOC

}  // namespace sharc::frontend
