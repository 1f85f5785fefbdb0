#include "frontend/creation.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "frontend/elementwise.h"
#include "frontend/shape_ops.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend {

Tensor iota(std::vector<int64_t> dims, int64_t dimension, DType dtype, std::source_location loc) {
  return Emit(hlo::Opcode::kIota, {}, {{"iota_dimension", dimension}},
              hlo::Shape(dtype, std::move(dims)), loc);
}

Tensor arange(int64_t n, DType dtype, std::source_location loc) {
  return iota({n}, 0, dtype, loc);
}

Tensor arange(double start, double stop, double step, DType dtype, std::source_location loc) {
  if (step == 0) ThrowTraceError(loc, "arange: step must not be 0");
  const double count = std::ceil((stop - start) / step);
  const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  // Computed in the target dtype, as numpy does for an explicit dtype.
  Tensor i = iota({n}, 0, dtype, loc);
  Tensor scaled = BinaryOp(hlo::Opcode::kMultiply, i, ScalarLike(step, i, loc), loc);
  return BinaryOp(hlo::Opcode::kAdd, scaled, ScalarLike(start, i, loc), loc);
}

Tensor full(std::vector<int64_t> dims, double value, DType dtype, std::source_location loc) {
  hlo::Literal scalar(hlo::Shape::Scalar(dtype));
  scalar.SetFromDouble(0, value);
  return broadcast_to(Constant(std::move(scalar), loc), dims, loc);
}

Tensor zeros(std::vector<int64_t> dims, DType dtype, std::source_location loc) {
  return full(std::move(dims), 0, dtype, loc);
}

Tensor ones(std::vector<int64_t> dims, DType dtype, std::source_location loc) {
  return full(std::move(dims), 1, dtype, loc);
}

Tensor zeros_like(const Tensor& x, std::source_location loc) {
  return full(x.dims(), 0, x.dtype(), loc);
}

Tensor ones_like(const Tensor& x, std::source_location loc) {
  return full(x.dims(), 1, x.dtype(), loc);
}

Tensor constant(hlo::Literal value, std::source_location loc) {
  if (!value.shape().is_array()) {
    ThrowTraceError(loc, absl::StrCat("constant: expected an array literal, got ",
                                      value.shape().ToString()));
  }
  return Constant(std::move(value), loc);
}

}  // namespace sharc::frontend
