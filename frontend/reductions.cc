#include "frontend/reductions.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "frontend/elementwise.h"
#include "frontend/shape_ops.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"

namespace sharc::frontend {
namespace {

using hlo::Opcode;

// The sorted, distinct, non-negative axes `axes` denotes for `x`.
std::vector<int64_t> ReducedAxes(const Tensor& x, const Axes& axes, const char* what,
                                 const std::source_location& loc) {
  std::vector<int64_t> out;
  if (axes.all()) {
    for (int64_t d = 0; d < x.rank(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t axis : axes.list()) {
    if (axis < -x.rank() || axis >= x.rank()) {
      ThrowTraceError(loc, absl::StrCat(what, ": axis ", axis, " is out of range for ",
                                        x.ToString()));
    }
    out.push_back(axis < 0 ? axis + x.rank() : axis);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    ThrowTraceError(loc, absl::StrCat(what, ": repeated axis"));
  }
  return out;
}

// The identity of `op` for `dtype` (0, or the lowest/highest value).
hlo::Literal Identity(Opcode op, DType dtype) {
  hlo::Literal init(hlo::Shape::Scalar(dtype));
  if (op == Opcode::kAdd) return init;
  const bool is_max = op == Opcode::kMaximum;
  if (hlo::IsFloatingPoint(dtype)) {
    init.SetFromDouble(0, is_max ? -std::numeric_limits<double>::infinity()
                                 : std::numeric_limits<double>::infinity());
  } else if (dtype == pred) {
    init.SetFromInt64(0, is_max ? 0 : 1);
  } else {
    hlo::DispatchPrimitiveType(dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_integral_v<T>) {
        init.template data<T>()[0] =
            is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      }
    });
  }
  return init;
}

Tensor Reduce(Opcode op, const Tensor& x, const Axes& axes, bool keepdims, const char* what,
              const std::source_location& loc) {
  std::vector<int64_t> reduced = ReducedAxes(x, axes, what, loc);
  Tracer* tracer = Tracer::Current();
  if (tracer == nullptr) {
    ThrowTraceError(loc, absl::StrCat(what, " outside of a traced function"));
  }
  Tensor init = Constant(Identity(op, x.dtype()), loc);
  Tensor result = x;
  if (!reduced.empty()) {
    result = Emit(Opcode::kReduce, {x, init},
                  {{"dimensions", reduced},
                   {"to_apply", tracer->ScalarComputation(op, x.dtype())}},
                  std::nullopt, loc);
  }
  if (!keepdims) return result;
  std::vector<int64_t> dims = x.dims();
  for (int64_t d : reduced) dims[static_cast<size_t>(d)] = 1;
  return reshape(result, dims, loc);
}

}  // namespace

Tensor sum(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) {
  return Reduce(Opcode::kAdd, x, axes, keepdims, "sum", loc);
}

Tensor mean(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) {
  Tensor values = hlo::IsFloatingPoint(x.dtype()) ? x : astype(x, f32, loc);
  int64_t count = 1;
  for (int64_t d : ReducedAxes(x, axes, "mean", loc)) count *= x.dim(d);
  Tensor total = Reduce(Opcode::kAdd, values, axes, keepdims, "mean", loc);
  return BinaryOp(Opcode::kDivide, total, ScalarLike(static_cast<double>(count), total, loc), loc);
}

Tensor max(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) {
  return Reduce(Opcode::kMaximum, x, axes, keepdims, "max", loc);
}

Tensor min(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) {
  return Reduce(Opcode::kMinimum, x, axes, keepdims, "min", loc);
}

}  // namespace sharc::frontend
