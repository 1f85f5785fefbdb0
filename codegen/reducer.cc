// Plain binary reducers (see reducer.h).
#include "codegen/reducer.h"

#include "codegen/lowering.h"
#include "hlo/ops/op_util.h"

namespace sharc::codegen {

std::optional<hlo::Opcode> PlainBinaryReducer(const hlo::Computation& reducer) {
  return hlo::MatchBinaryReducer(reducer);
}

Halide::Expr Combine(hlo::Opcode op, const Halide::Expr& a, const Halide::Expr& b) {
  using hlo::Opcode;
  const Halide::Type t = a.type();
  auto wrapping = [&](auto f) {
    if (t.is_float()) return f(a, b);
    Halide::Type u = Halide::UInt(t.bits());
    return Halide::cast(t, f(Halide::cast(u, a), Halide::cast(u, b)));
  };
  switch (op) {
    case Opcode::kAdd: return wrapping([](Halide::Expr x, Halide::Expr y) { return x + y; });
    case Opcode::kMultiply: return wrapping([](Halide::Expr x, Halide::Expr y) { return x * y; });
    // NaN propagates: a NaN `a` by the outer select, a NaN `b` because a
    // comparison with NaN is false, so the inner select already gives b.
    // On AVX-512 a reduction step is then four instructions (a NaN test of
    // a, a compare, a mask or, a masked move); testing b for NaN as well, as
    // this once did, took six.
    case Opcode::kMaximum: {
      if (t.is_bool()) return a || b;
      Halide::Expr m = Halide::select(a > b, a, b);
      if (!t.is_float()) return m;
      return Halide::select(Halide::is_nan(a), a, m);
    }
    case Opcode::kMinimum: {
      if (t.is_bool()) return a && b;
      Halide::Expr m = Halide::select(a < b, a, b);
      if (!t.is_float()) return m;
      return Halide::select(Halide::is_nan(a), a, m);
    }
    case Opcode::kAnd: return t.is_bool() ? (a && b) : (a & b);
    case Opcode::kOr: return t.is_bool() ? (a || b) : (a | b);
    default: return t.is_bool() ? (a != b) : (a ^ b);
  }
}

}  // namespace sharc::codegen
