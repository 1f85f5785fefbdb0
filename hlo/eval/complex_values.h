// Reading and writing complex elements (c64: two floats, c128: two doubles)
// of a Literal, and the discrete Fourier transforms of fft, for the
// reference evaluators of complex arithmetic (hlo/ops/complex_semantics.cc)
// and fft (hlo/ops/linalg_ops.cc). Values are computed in complex<double>
// and rounded to c64 on store, as the interpreter's real floats are.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "absl/types/span.h"
#include "hlo/ir/literal.h"

namespace sharc::hlo {

using Complex128 = std::complex<double>;

// Element `i` of `literal`: a complex element as it is, a real one with a
// zero imaginary part.
Complex128 GetComplex(const Literal& literal, int64_t i);
// Stores `value` into element `i` of the c64 or c128 `literal`.
void SetComplex(Literal& literal, int64_t i, Complex128 value);

// The complex functions whose direct formula loses accuracy or differs
// from XLA at special values (the others are std::'s).
// exp(z) - 1, accurate for small |z|: expm1(x) cos(y) - 2 sin^2(y/2) in the
// real part, which exp(z) - 1 computes with cancellation.
Complex128 ComplexExpm1(Complex128 z);
// log(1 + z), accurate for small |z|: log1p(2x + x^2 + y^2) / 2 in the real
// part.
Complex128 ComplexLog1p(Complex128 z);
// z^w as XLA's evaluator defines it: 1 when z = 1 or w = 0, an infinite
// positive real base to a positive (negative) real power is inf (0), else
// std::pow.
Complex128 ComplexPower(Complex128 z, Complex128 w);
// atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), XLA's complex atan2.
Complex128 ComplexAtan2(Complex128 y, Complex128 x);

// XLA's fft over the last fft_length.size() dims of `x`: FFT and IFFT (complex
// to complex; IFFT divides by the signal's size), RFFT (real to its
// n/2+1 non-negative frequencies) and IRFFT (those frequencies back to n
// reals). `result` has the fft's result shape. A direct O(n^2) sum per axis.
void FourierTransform(const Literal& x, const std::string& fft_type,
                      absl::Span<const int64_t> fft_length, Literal& result);

}  // namespace sharc::hlo
