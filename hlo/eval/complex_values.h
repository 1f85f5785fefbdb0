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

// XLA's fft over the last fft_length.size() dims of `x`: FFT and IFFT (complex
// to complex; IFFT divides by the signal's size), RFFT (real to its
// n/2+1 non-negative frequencies) and IRFFT (those frequencies back to n
// reals). `result` has the fft's result shape. A direct O(n^2) sum per axis.
void FourierTransform(const Literal& x, const std::string& fft_type,
                      absl::Span<const int64_t> fft_length, Literal& result);

}  // namespace sharc::hlo
