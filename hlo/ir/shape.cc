#include "hlo/ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::hlo {

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.is_tuple_ = true;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

void Shape::set_dynamic_dim(int64_t i, bool dynamic) {
  if (dynamic_dims_.size() < dims_.size()) dynamic_dims_.resize(dims_.size(), false);
  if (static_cast<size_t>(i) < dynamic_dims_.size()) dynamic_dims_[static_cast<size_t>(i)] = dynamic;
}

bool Shape::has_dynamic_dims() const {
  if (is_tuple_) {
    for (const Shape& s : tuple_shapes_) {
      if (s.has_dynamic_dims()) return true;
    }
    return false;
  }
  for (size_t i = 0; i < dims_.size() && i < dynamic_dims_.size(); ++i) {
    if (dynamic_dims_[i]) return true;
  }
  return false;
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

int64_t Shape::byte_size() const {
  if (is_tuple_) {
    int64_t total = 0;
    for (const Shape& s : tuple_shapes_) total += s.byte_size();
    return total;
  }
  return num_elements() * ByteWidth(type_);
}

int64_t Shape::leaf_count() const {
  if (!is_tuple_) return 1;
  int64_t n = 0;
  for (const Shape& s : tuple_shapes_) n += s.leaf_count();
  return n;
}

std::string Shape::ToString() const {
  if (is_tuple_) {
    std::vector<std::string> parts;
    parts.reserve(tuple_shapes_.size());
    for (const Shape& s : tuple_shapes_) parts.push_back(s.ToString());
    return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
  }
  std::vector<std::string> dims;
  for (size_t i = 0; i < dims_.size(); ++i) {
    dims.push_back(absl::StrCat(is_dynamic_dim(static_cast<int64_t>(i)) ? "<=" : "", dims_[i]));
  }
  return absl::StrCat(PrimitiveTypeName(type_), "[", absl::StrJoin(dims, ","), "]");
}

bool Shape::operator==(const Shape& other) const {
  if (is_tuple_ != other.is_tuple_) return false;
  if (is_tuple_) return tuple_shapes_ == other.tuple_shapes_;
  return type_ == other.type_ && dims_ == other.dims_;
}

bool Shape::SameDimensions(const Shape& other) const {
  if (is_tuple_ != other.is_tuple_) return false;
  if (!is_tuple_) return dims_ == other.dims_;
  if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
  for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
    if (!tuple_shapes_[i].SameDimensions(other.tuple_shapes_[i])) return false;
  }
  return true;
}

absl::Status ValidateShape(const Shape& shape) {
  if (shape.is_tuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      absl::Status st = ValidateShape(s);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (shape.type() == PrimitiveType::kInvalid) {
    return absl::InvalidArgumentError("shape has no element type");
  }
  int64_t n = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t d = shape.dim(i);
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", shape.ToString(), " has negative dimension ", i, " (", d, ")"));
    }
    if (d != 0 && n > kMaxElements / d) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", shape.ToString(), " has too many elements (limit 2^40)"));
    }
    n *= d;
  }
  return absl::OkStatus();
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

bool NextIndex(absl::Span<const int64_t> dims, std::vector<int64_t>& index) {
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

}  // namespace sharc::hlo
