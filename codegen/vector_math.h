// Internal to codegen/: vectorisable forms of f32 transcendentals, built
// from multiplies, adds and bit operations that LLVM keeps in vector
// registers. Halide 14's own tanh is a scalar libm call (40x slower,
// perf_anchors.md), and its exp spends a quarter of its instructions on a
// floor that x86 splits into two 256-bit rounds.
#pragma once

#include "Halide.h"

namespace sharc::codegen {

// tanh(z) for a Float(32) z; within 5 ulp (relative 6e-7); NaN, +-0, subnormals
// and +-inf exact.
Halide::Expr VectorTanh(const Halide::Expr& z);

// exp(x) for a Float(32) x: within 1 ulp of the correctly rounded result
// for every normal and subnormal result; +-inf, NaN and overflow as IEEE
// (exp(+inf) = +inf, exp(-inf) = +0, NaN stays NaN).
Halide::Expr VectorExp(const Halide::Expr& x);

// How softmax's exp gets the lanes whose result rounds to +0 (x below
// -103.98, a masked entry's -inf or -1e9). kSelectZero: they are computed
// from a stand-in input whose multiplies cannot underflow and then set to
// +0 (a compare and two selects), because an underflowing multiply costs a
// microcode assist on Intel cores. kScaleByZero: x is clamped where the
// power of two it builds is exactly +0, and the last multiply gives +0
// (one select, a vmaxps); lanes between the clamp and -103.98 underflow in
// that multiply, which AMD's cores do in hardware. Same bits either way.
enum class ExpUnderflow { kSelectZero, kScaleByZero };

// VectorExp(x), bit for bit, for an x known to be <= 0 or NaN (value_sign.h):
// with no overflow to handle, every lane takes one path, and the loop is
// about a third fewer compares and selects (softmax's exp(x - max)).
// Unspecified for x > 0.
Halide::Expr VectorExpOfNonPositive(const Halide::Expr& x, ExpUnderflow underflow);

}  // namespace sharc::codegen
