#include "hlo/eval/complex_values.h"

#include <cmath>
#include <numbers>
#include <vector>

namespace sharc::hlo {

Complex128 GetComplex(const Literal& literal, int64_t i) {
  switch (literal.shape().type()) {
    case PrimitiveType::kC64: return Complex128(literal.data<std::complex<float>>()[i]);
    case PrimitiveType::kC128: return literal.data<Complex128>()[i];
    default: return Complex128(literal.GetAsDouble(i), 0);
  }
}

void SetComplex(Literal& literal, int64_t i, Complex128 value) {
  if (literal.shape().type() == PrimitiveType::kC64) {
    literal.data<std::complex<float>>()[i] = std::complex<float>(value);
  } else {
    literal.data<Complex128>()[i] = value;
  }
}

Complex128 ComplexExpm1(Complex128 z) {
  const double half_sin = std::sin(z.imag() / 2);
  return {std::expm1(z.real()) * std::cos(z.imag()) - 2 * half_sin * half_sin,
          std::exp(z.real()) * std::sin(z.imag())};
}

Complex128 ComplexLog1p(Complex128 z) {
  const double x = z.real(), y = z.imag();
  return {std::log1p(x * (2 + x) + y * y) / 2, std::atan2(y, 1 + x)};
}

Complex128 ComplexPower(Complex128 z, Complex128 w) {
  if (z == Complex128(1) || w == Complex128(0)) return 1;
  const bool positive_infinite_base = z.imag() == 0 && z.real() > 0 && std::isinf(z.real());
  if (positive_infinite_base && w.imag() == 0 && w.real() > 0) return z;
  if (positive_infinite_base && w.imag() == 0 && w.real() < 0) return 0;
  return std::pow(z, w);
}

Complex128 ComplexAtan2(Complex128 y, Complex128 x) {
  const Complex128 i(0, 1);
  return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
}

namespace {

// Transforms, in place, every line of `data` (row-major `dims`) along `axis`
// whose length is `n` in the input and `out_n` in the output: out[k] =
// scale * sum_j in[j] e^(sign 2 pi i j k / n), for j < min(n, in_n).
void TransformAxis(std::vector<Complex128>& data, std::vector<int64_t>& dims, int64_t axis,
                   int64_t n, int64_t out_n, double sign, bool hermitian_input) {
  const int64_t in_n = dims[static_cast<size_t>(axis)];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<Complex128> out(static_cast<size_t>(outer * out_n * inner));
  std::vector<Complex128> line(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      // The whole signal of n points: IRFFT's input holds only the first
      // n/2+1, the rest are their conjugates (a real signal's spectrum).
      for (int64_t j = 0; j < n; ++j) {
        const int64_t from = hermitian_input && j >= in_n ? n - j : j;
        Complex128 v = from < in_n ? data[static_cast<size_t>((o * in_n + from) * inner + i)]
                                   : Complex128(0);
        line[static_cast<size_t>(j)] = hermitian_input && j >= in_n ? std::conj(v) : v;
      }
      for (int64_t k = 0; k < out_n; ++k) {
        Complex128 sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          // (j * k) mod n keeps the angle small, and so exact for k = 0.
          const double angle = sign * 2 * std::numbers::pi * static_cast<double>((j * k) % n) /
                               static_cast<double>(n);
          sum += line[static_cast<size_t>(j)] * Complex128(std::cos(angle), std::sin(angle));
        }
        out[static_cast<size_t>((o * out_n + k) * inner + i)] = sum;
      }
    }
  }
  data = std::move(out);
  dims[static_cast<size_t>(axis)] = out_n;
}

}  // namespace

void FourierTransform(const Literal& x, const std::string& fft_type,
                      absl::Span<const int64_t> fft_length, Literal& result) {
  std::vector<int64_t> dims = x.shape().dims();
  std::vector<Complex128> data(static_cast<size_t>(x.num_elements()));
  for (int64_t i = 0; i < x.num_elements(); ++i) data[static_cast<size_t>(i)] = GetComplex(x, i);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t count = static_cast<int64_t>(fft_length.size());
  const bool inverse = fft_type == "IFFT" || fft_type == "IRFFT";
  double scale = 1;
  // IRFFT undoes RFFT: the inner axes first as complex IFFTs, the last one
  // from its half spectrum to n reals. The others go axis by axis in order.
  for (int64_t a = 0; a < count; ++a) {
    const int64_t axis = rank - count + a;
    const int64_t n = fft_length[static_cast<size_t>(a)];
    const bool last = a == count - 1;
    int64_t out_n = n;
    if (fft_type == "RFFT" && last) out_n = n / 2 + 1;
    if (fft_type == "IRFFT" && last) {
      TransformAxis(data, dims, axis, n, n, +1, /*hermitian_input=*/true);
    } else if (fft_type == "RFFT" && !last) {
      continue;  // done after the last axis: see below
    } else {
      TransformAxis(data, dims, axis, n, out_n, inverse ? +1 : -1, false);
    }
    if (inverse) scale /= static_cast<double>(n);
  }
  // RFFT transforms its last axis first (real input, half spectrum), then
  // the others as complex FFTs; the sums are linear, so the order only
  // decides which axis is halved.
  if (fft_type == "RFFT") {
    for (int64_t a = 0; a + 1 < count; ++a) {
      const int64_t axis = rank - count + a;
      TransformAxis(data, dims, axis, fft_length[static_cast<size_t>(a)],
                    fft_length[static_cast<size_t>(a)], -1, false);
    }
  }
  const bool real_result = fft_type == "IRFFT";
  for (int64_t i = 0; i < result.num_elements(); ++i) {
    const Complex128 v = data[static_cast<size_t>(i)] * scale;
    if (real_result) {
      result.SetFromDouble(i, v.real());
    } else {
      SetComplex(result, i, v);
    }
  }
}

}  // namespace sharc::hlo
