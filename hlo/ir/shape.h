// Shapes: an array (element type + dimensions, row-major) or a tuple of shapes.
// Layouts in the text format are parsed and ignored: every array is row-major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::hlo {

// Refuse shapes with more elements than this: the interpreter would need more
// memory than any machine we run on, and int64 arithmetic stays safe below it.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

class Shape {
 public:
  Shape() = default;  // an invalid shape
  Shape(PrimitiveType type, std::vector<int64_t> dims)
      : type_(type), dims_(std::move(dims)) {}
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }

  bool is_tuple() const { return is_tuple_; }
  bool is_array() const { return !is_tuple_ && type_ != PrimitiveType::kInvalid; }
  bool valid() const { return is_tuple_ || type_ != PrimitiveType::kInvalid; }

  PrimitiveType type() const { return type_; }
  void set_type(PrimitiveType type) { type_ = type; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::vector<int64_t>& mutable_dims() { return dims_; }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }

  // Bounded dynamic dimensions (`f32[<=8,4]`): the size is an upper bound.
  // Kept so the text prints back as written; sharc computes with static
  // shapes only, so equality and all shape arithmetic use the bound and no
  // command that computes accepts such a value (CheckRunnableTypes).
  bool is_dynamic_dim(int64_t i) const {
    return static_cast<size_t>(i) < dynamic_dims_.size() && dynamic_dims_[static_cast<size_t>(i)];
  }
  void set_dynamic_dim(int64_t i, bool dynamic);
  // True if any dimension (of any tuple leaf) is dynamic.
  bool has_dynamic_dims() const;
  bool is_scalar() const { return !is_tuple_ && dims_.empty(); }

  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }
  const Shape& tuple_shape(int64_t i) const { return tuple_shapes_[static_cast<size_t>(i)]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Number of elements of an array shape (1 for a scalar).
  int64_t num_elements() const;
  // Bytes of an array, or the sum over the leaves of a tuple.
  int64_t byte_size() const;
  // Number of array leaves (1 for an array).
  int64_t leaf_count() const;

  // Text form, e.g. "f32[2,3]", "f32[<=8,3]" or "(f32[], s32[4])".
  std::string ToString() const;

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Same dims (and tuple structure), element types ignored.
  bool SameDimensions(const Shape& other) const;

 private:
  PrimitiveType type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_dims_;  // empty: all static
  bool is_tuple_ = false;
  std::vector<Shape> tuple_shapes_;
};

// Rejects negative dimensions and element counts that overflow or exceed
// kMaxElements. The message names the shape.
absl::Status ValidateShape(const Shape& shape);

// Row-major strides (in elements) of `dims`.
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);

// Advances a multi-index over `dims` in row-major order; returns false after
// the last index.
bool NextIndex(absl::Span<const int64_t> dims, std::vector<int64_t>& index);

}  // namespace sharc::hlo
