#include "hlo/ir/literal.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "hlo/ir/narrow_types.h"

namespace sharc::hlo {

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.is_tuple()) {
    for (const Shape& s : shape.tuple_shapes()) elements_.emplace_back(s);
    return;
  }
  bytes_.assign(static_cast<size_t>(shape.byte_size()), 0);
}

Literal Literal::Tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal l;
  l.shape_ = Shape::Tuple(std::move(shapes));
  l.elements_ = std::move(elements);
  return l;
}

// A complex element reads as its real part and is set to (value, 0): the
// partitioner's masks and the result summaries use these on any array.
double Literal::GetAsDouble(int64_t i) const {
  if (IsNarrowFloat(shape_.type())) return NarrowFloatToDouble(shape_.type(), untyped_data()[i]);
  if (IsSubByteInteger(shape_.type())) {
    return static_cast<double>(SubByteToInt64(shape_.type(), untyped_data()[i]));
  }
  if (shape_.type() == PrimitiveType::kC64) return data<std::complex<float>>()[i].real();
  if (shape_.type() == PrimitiveType::kC128) return data<std::complex<double>>()[i].real();
  return DispatchPrimitiveType(shape_.type(), [&](auto t) -> double {
    using T = decltype(t);
    if constexpr (kIsLowPrecisionFloat<T>) {
      return static_cast<double>(static_cast<float>(data<T>()[i]));
    } else {
      return static_cast<double>(data<T>()[i]);
    }
  });
}

int64_t Literal::GetAsInt64(int64_t i) const {
  if (IsSubByteInteger(shape_.type())) return SubByteToInt64(shape_.type(), untyped_data()[i]);
  if (IsNarrowFloat(shape_.type())) {
    // e8m0 reaches 2^127: clamp into int64 before converting.
    const double v = NarrowFloatToDouble(shape_.type(), untyped_data()[i]);
    if (!std::isfinite(v)) return 0;
    return static_cast<int64_t>(std::clamp(v, -0x1p63, 0x1p62));
  }
  return DispatchPrimitiveType(shape_.type(), [&](auto t) -> int64_t {
    using T = decltype(t);
    if constexpr (kIsLowPrecisionFloat<T>) {
      return static_cast<int64_t>(static_cast<float>(data<T>()[i]));
    } else {
      return static_cast<int64_t>(data<T>()[i]);
    }
  });
}

void Literal::SetFromDouble(int64_t i, double v) {
  if (IsNarrowFloat(shape_.type())) {
    untyped_data()[i] = NarrowFloatFromDouble(shape_.type(), v);
    return;
  }
  if (IsSubByteInteger(shape_.type())) {
    // Floats saturate to the integer's range (NaN is 0), as XLA converts.
    const int bits = shape_.type() == PrimitiveType::kS2 || shape_.type() == PrimitiveType::kU2 ? 2 : 4;
    const bool is_signed = IsSignedInteger(shape_.type());
    const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0;
    const double hi = is_signed ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    const double clamped = std::isnan(v) ? 0 : std::clamp(std::trunc(v), lo, hi);
    untyped_data()[i] = SubByteFromInt64(shape_.type(), static_cast<int64_t>(clamped));
    return;
  }
  if (shape_.type() == PrimitiveType::kC64) {
    data<std::complex<float>>()[i] = std::complex<float>(static_cast<float>(v), 0);
    return;
  }
  if (shape_.type() == PrimitiveType::kC128) {
    data<std::complex<double>>()[i] = std::complex<double>(v, 0);
    return;
  }
  DispatchPrimitiveType(shape_.type(), [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsLowPrecisionFloat<T>) {
      data<T>()[i] = T(static_cast<float>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      data<T>()[i] = v != 0;
    } else {
      data<T>()[i] = static_cast<T>(v);
    }
  });
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  if (IsSubByteInteger(shape_.type())) {
    untyped_data()[i] = SubByteFromInt64(shape_.type(), v);  // wraps, as C casts do
    return;
  }
  if (IsNarrowFloat(shape_.type())) {
    untyped_data()[i] = NarrowFloatFromDouble(shape_.type(), static_cast<double>(v));
    return;
  }
  DispatchPrimitiveType(shape_.type(), [&](auto t) {
    using T = decltype(t);
    if constexpr (kIsLowPrecisionFloat<T>) {
      data<T>()[i] = T(static_cast<float>(v));
    } else if constexpr (std::is_same_v<T, bool>) {
      data<T>()[i] = v != 0;
    } else {
      data<T>()[i] = static_cast<T>(v);
    }
  });
}

bool Literal::operator==(const Literal& other) const {
  if (shape_ != other.shape_) return false;
  if (shape_.is_tuple()) return elements_ == other.elements_;
  return bytes_ == other.bytes_;
}

namespace {

std::string FormatFloat(double v, int digits) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    if (v == 0 && std::signbit(v)) return "-0";
    return absl::StrFormat("%.0f", v);
  }
  return absl::StrFormat("%.*g", digits, v);
}

void AppendValues(const Literal& lit, int64_t dim, int64_t& index, std::string& out) {
  const Shape& shape = lit.shape();
  if (dim == shape.rank()) {
    out += FormatElement(lit, index++);
    return;
  }
  out += "{";
  for (int64_t i = 0; i < shape.dim(dim); ++i) {
    if (i > 0) out += ", ";
    AppendValues(lit, dim + 1, index, out);
  }
  out += "}";
}

}  // namespace

std::string FormatElement(const Literal& literal, int64_t i) {
  // The narrow types (a byte each, hlo/ir/narrow_types.h) and the complex
  // types (two floats or doubles).
  if (IsSubByteInteger(literal.shape().type())) return absl::StrCat(literal.GetAsInt64(i));
  // Nine digits name every narrow float's value exactly enough to read it
  // back to the same pattern.
  if (IsNarrowFloat(literal.shape().type())) return FormatFloat(literal.GetAsDouble(i), 9);
  switch (literal.shape().type()) {
    case PrimitiveType::kC64: {
      const float* parts = reinterpret_cast<const float*>(literal.untyped_data()) + 2 * i;
      return absl::StrCat("(", FormatFloat(parts[0], 9), ", ", FormatFloat(parts[1], 9), ")");
    }
    case PrimitiveType::kC128: {
      const double* parts = reinterpret_cast<const double*>(literal.untyped_data()) + 2 * i;
      return absl::StrCat("(", FormatFloat(parts[0], 17), ", ", FormatFloat(parts[1], 17), ")");
    }
    default:
      break;
  }
  return DispatchPrimitiveType(literal.shape().type(), [&](auto t) -> std::string {
    using T = decltype(t);
    T v = literal.data<T>()[i];
    if constexpr (std::is_same_v<T, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::is_same_v<T, double>) {
      return FormatFloat(v, 17);
    } else if constexpr (std::is_same_v<T, float>) {
      return FormatFloat(v, 9);
    } else if constexpr (kIsLowPrecisionFloat<T>) {
      return FormatFloat(static_cast<float>(v), 5);
    } else {
      return absl::StrCat(v);
    }
  });
}

std::string Literal::ValuesToString() const {
  if (shape_.is_tuple()) {
    std::vector<std::string> parts;
    for (const Literal& e : elements_) parts.push_back(e.ValuesToString());
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  std::string out;
  int64_t index = 0;
  AppendValues(*this, 0, index, out);
  return out;
}

std::string Literal::ToString() const {
  return absl::StrCat(shape_.ToString(), " ", ValuesToString());
}

}  // namespace sharc::hlo
