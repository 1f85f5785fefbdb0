#include "runtime/reduction.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace sharc::runtime {
namespace {

using hlo::BFloat16;
using hlo::Half;

// Elements per block: the partial result of a block stays in L1 while every
// contribution is folded into it.
constexpr int64_t kBlockBytes = 8192;

template <typename T, typename Op>
void ReduceLoop(const void* const* inputs, int64_t g, int64_t offset, int64_t count,
                T* __restrict out, Op op) {
  constexpr int64_t kBlock = std::max<int64_t>(1, kBlockBytes / static_cast<int64_t>(sizeof(T)));
  for (int64_t b = 0; b < count; b += kBlock) {
    const int64_t n = std::min(kBlock, count - b);
    T* __restrict o = out + b;
    const T* __restrict in0 = static_cast<const T*>(inputs[0]) + offset + b;
    if (g == 1) {
      std::memcpy(o, in0, static_cast<size_t>(n) * sizeof(T));
      continue;
    }
    // OpenMP simd, not threads: each device thread already folds its own
    // slice. Elements are independent and members still combine in order,
    // so the bits do not change (checked on every type and kind).
    const T* __restrict in1 = static_cast<const T*>(inputs[1]) + offset + b;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) o[i] = op(in0[i], in1[i]);
    for (int64_t j = 2; j < g; ++j) {
      const T* __restrict x = static_cast<const T*>(inputs[j]) + offset + b;
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) o[i] = op(o[i], x[i]);
    }
  }
}

// Float max/min as the interpreter computes them: a NaN operand wins (the
// first one if both are NaN), otherwise the larger/smaller (b on ties).
template <typename F>
inline F FloatMax(F a, F b) {
  F r = a > b ? a : b;
  r = std::isnan(b) ? b : r;
  return std::isnan(a) ? a : r;
}
template <typename F>
inline F FloatMin(F a, F b) {
  F r = a < b ? a : b;
  r = std::isnan(b) ? b : r;
  return std::isnan(a) ? a : r;
}

template <typename T>
void ReduceTyped(ReductionKind kind, const void* const* inputs, int64_t g, int64_t offset,
                 int64_t count, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (kind) {
      case ReductionKind::kSum:
      case ReductionKind::kMax:
      case ReductionKind::kOr:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](bool a, bool b) { return a || b; });
      default:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](bool a, bool b) { return a && b; });
    }
  } else if constexpr (hlo::kIsLowPrecisionFloat<T>) {
    // Round after every combination, as the interpreter does.
    switch (kind) {
      case ReductionKind::kSum:
        return ReduceLoop<T>(inputs, g, offset, count, out,
                             [](T a, T b) { return T(static_cast<float>(a) + static_cast<float>(b)); });
      case ReductionKind::kProduct:
        return ReduceLoop<T>(inputs, g, offset, count, out,
                             [](T a, T b) { return T(static_cast<float>(a) * static_cast<float>(b)); });
      case ReductionKind::kMax:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) {
          return T(FloatMax(static_cast<float>(a), static_cast<float>(b)));
        });
      case ReductionKind::kMin:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) {
          return T(FloatMin(static_cast<float>(a), static_cast<float>(b)));
        });
      default:
        return;  // rejected by CheckReduction
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (kind) {
      case ReductionKind::kSum:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return a + b; });
      case ReductionKind::kProduct:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return a * b; });
      case ReductionKind::kMax:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return FloatMax(a, b); });
      case ReductionKind::kMin:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return FloatMin(a, b); });
      default:
        return;
    }
  } else {
    // Integers wrap: compute in the unsigned type, where overflow is defined.
    using U = std::make_unsigned_t<T>;
    switch (kind) {
      case ReductionKind::kSum:
        return ReduceLoop<T>(inputs, g, offset, count, out,
                             [](T a, T b) { return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b))); });
      case ReductionKind::kProduct:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) {
          // Promote past int so that u16*u16 cannot overflow a signed int.
          using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
          return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) *
                                               static_cast<W>(static_cast<U>(b))));
        });
      case ReductionKind::kMax:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return a > b ? a : b; });
      case ReductionKind::kMin:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return a < b ? a : b; });
      case ReductionKind::kAnd:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return static_cast<T>(a & b); });
      case ReductionKind::kOr:
        return ReduceLoop<T>(inputs, g, offset, count, out, [](T a, T b) { return static_cast<T>(a | b); });
    }
  }
}

}  // namespace

const char* ReductionKindName(ReductionKind kind) {
  switch (kind) {
    case ReductionKind::kSum: return "sum";
    case ReductionKind::kProduct: return "prod";
    case ReductionKind::kMax: return "max";
    case ReductionKind::kMin: return "min";
    case ReductionKind::kAnd: return "and";
    case ReductionKind::kOr: return "or";
  }
  return "?";
}

absl::Status CheckReduction(hlo::PrimitiveType type, ReductionKind kind) {
  if (type == hlo::PrimitiveType::kInvalid) {
    return absl::InvalidArgumentError("cannot reduce values of invalid element type");
  }
  if (hlo::IsComplex(type) && kind != ReductionKind::kSum && kind != ReductionKind::kProduct) {
    return absl::InvalidArgumentError(absl::StrCat("complex values have no reduction '",
                                                   ReductionKindName(kind),
                                                   "' (only sums and products)"));
  }
  if (hlo::IsFloatingPoint(type) && (kind == ReductionKind::kAnd || kind == ReductionKind::kOr)) {
    return absl::InvalidArgumentError(absl::StrCat("reduction '", ReductionKindName(kind),
                                                   "' is not defined on ",
                                                   hlo::PrimitiveTypeName(type)));
  }
  return absl::OkStatus();
}

void ReduceElements(hlo::PrimitiveType type, ReductionKind kind, const void* const* inputs,
                    int64_t num_inputs, int64_t offset, int64_t count, void* out) {
  if (count <= 0 || num_inputs <= 0) return;
  // Complex values add or multiply (CheckReduction), in their own precision.
  auto complex_loop = [&](auto* typed_out) {
    if (kind == ReductionKind::kProduct) {
      return ReduceLoop(inputs, num_inputs, offset, count, typed_out,
                        [](auto a, auto b) { return a * b; });
    }
    ReduceLoop(inputs, num_inputs, offset, count, typed_out, [](auto a, auto b) { return a + b; });
  };
  if (type == hlo::PrimitiveType::kC64) return complex_loop(static_cast<std::complex<float>*>(out));
  if (type == hlo::PrimitiveType::kC128) {
    return complex_loop(static_cast<std::complex<double>*>(out));
  }
  hlo::DispatchPrimitiveType(type, [&](auto t) {
    using T = decltype(t);
    ReduceTyped<T>(kind, inputs, num_inputs, offset, count, static_cast<T*>(out));
  });
}

}  // namespace sharc::runtime
