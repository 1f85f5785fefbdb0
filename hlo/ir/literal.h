// A Literal is a concrete value of a Shape: the contents of a constant, an
// input or output of the interpreter. Arrays own a dense row-major buffer;
// tuples own their elements.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "hlo/ir/shape.h"

namespace sharc::hlo {

class Literal {
 public:
  Literal() = default;
  // A zero-filled array (or a tuple of zero-filled arrays) of `shape`.
  explicit Literal(const Shape& shape);
  static Literal Tuple(std::vector<Literal> elements);

  template <typename T>
  static Literal Scalar(T value) {
    Literal l(Shape::Scalar(PrimitiveTypeOf<T>()));
    l.data<T>()[0] = value;
    return l;
  }
  template <typename T>
  static Literal Vector(absl::Span<const T> values) {
    Literal l(Shape(PrimitiveTypeOf<T>(), {static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) l.data<T>()[i] = values[i];
    return l;
  }
  template <typename T>
  static Literal FromValues(std::vector<int64_t> dims, absl::Span<const T> values) {
    Literal l(Shape(PrimitiveTypeOf<T>(), std::move(dims)));
    for (size_t i = 0; i < values.size() && i < static_cast<size_t>(l.num_elements()); ++i)
      l.data<T>()[i] = values[i];
    return l;
  }

  const Shape& shape() const { return shape_; }
  int64_t num_elements() const { return shape_.num_elements(); }
  bool is_tuple() const { return shape_.is_tuple(); }

  template <typename T>
  absl::Span<T> data() {
    return absl::Span<T>(reinterpret_cast<T*>(bytes_.data()),
                         static_cast<size_t>(shape_.num_elements()));
  }
  template <typename T>
  absl::Span<const T> data() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(bytes_.data()),
                               static_cast<size_t>(shape_.num_elements()));
  }
  uint8_t* untyped_data() { return bytes_.data(); }
  const uint8_t* untyped_data() const { return bytes_.data(); }
  int64_t size_bytes() const { return static_cast<int64_t>(bytes_.size()); }

  std::vector<Literal>& elements() { return elements_; }
  const std::vector<Literal>& elements() const { return elements_; }
  const Literal& element(int64_t i) const { return elements_[static_cast<size_t>(i)]; }

  // Element `linear_index` converted to double / int64 (any array type).
  double GetAsDouble(int64_t linear_index) const;
  int64_t GetAsInt64(int64_t linear_index) const;
  // Stores `value` converted to the literal's type (float types round).
  void SetFromDouble(int64_t linear_index, double value);
  void SetFromInt64(int64_t linear_index, int64_t value);

  // Same shape and bit-identical contents (NaNs with equal bits compare equal).
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // Element values as HLO text: "{1, 2, 3}", "{ {1, 2}, {3, 4} }", "7";
  // tuples as "( {1}, 2 )". Floats print with enough digits to round-trip.
  std::string ValuesToString() const;
  // Shape followed by values, e.g. "f32[2] {1, 2}".
  std::string ToString() const;

 private:
  Shape shape_;
  std::vector<uint8_t> bytes_;
  std::vector<Literal> elements_;
};

// Formats one element of `literal` as HLO text ("1.5", "-inf", "nan", "true").
std::string FormatElement(const Literal& literal, int64_t linear_index);

}  // namespace sharc::hlo
