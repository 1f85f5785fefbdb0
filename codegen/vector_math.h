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

// VectorExp(x), bit for bit, for an x known to be <= 0 or NaN (value_sign.h):
// with no overflow to handle, every lane takes one path, and the loop is
// about a third fewer compares and selects (softmax's exp(x - max)).
// Unspecified for x > 0.
Halide::Expr VectorExpOfNonPositive(const Halide::Expr& x);

}  // namespace sharc::codegen
