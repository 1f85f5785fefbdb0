#include "hlo/batching/batch_tree.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::hlo {

BatchTree BatchTree::Leaf(bool batched) {
  BatchTree t;
  t.batched_ = batched;
  return t;
}

BatchTree BatchTree::Tuple(std::vector<BatchTree> elements) {
  BatchTree t;
  t.is_tuple_ = true;
  t.elements_ = std::move(elements);
  return t;
}

BatchTree BatchTree::Uniform(const Shape& shape, bool batched) {
  if (!shape.is_tuple()) return Leaf(batched);
  std::vector<BatchTree> elements;
  for (const Shape& s : shape.tuple_shapes()) elements.push_back(Uniform(s, batched));
  return Tuple(std::move(elements));
}

bool BatchTree::Any() const {
  if (!is_tuple_) return batched_;
  for (const BatchTree& e : elements_)
    if (e.Any()) return true;
  return false;
}

bool BatchTree::All() const {
  if (!is_tuple_) return batched_;
  for (const BatchTree& e : elements_)
    if (!e.All()) return false;
  return true;
}

BatchTree BatchTree::Union(const BatchTree& other) const {
  if (!is_tuple_) return Leaf(batched_ || other.batched_);
  std::vector<BatchTree> elements;
  for (size_t i = 0; i < elements_.size(); ++i) {
    elements.push_back(elements_[i].Union(other.elements_[i]));
  }
  return Tuple(std::move(elements));
}

bool BatchTree::IsSubsetOf(const BatchTree& other) const { return Union(other) == other; }

Shape BatchTree::Apply(const Shape& shape, int64_t batch_size) const {
  if (is_tuple_) {
    std::vector<Shape> elements;
    for (size_t i = 0; i < elements_.size(); ++i) {
      elements.push_back(elements_[i].Apply(shape.tuple_shapes()[i], batch_size));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (!batched_) return shape;
  std::vector<int64_t> dims = {batch_size};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

bool BatchTree::operator==(const BatchTree& other) const {
  return is_tuple_ == other.is_tuple_ && batched_ == other.batched_ && elements_ == other.elements_;
}

std::string BatchTree::ToString() const {
  if (!is_tuple_) return batched_ ? "B" : "-";
  std::vector<std::string> parts;
  for (const BatchTree& e : elements_) parts.push_back(e.ToString());
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

}  // namespace sharc::hlo
