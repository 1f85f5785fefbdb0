// BatchTree: which array leaves of a value carry vmap's batch dimension.
// Every batched leaf has it at dim 0 (the canonical form the rules keep), so
// one bool per leaf says everything; tuples nest like their shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/ir/shape.h"

namespace sharc::hlo {

class BatchTree {
 public:
  BatchTree() = default;  // an unbatched array leaf
  static BatchTree Leaf(bool batched);
  static BatchTree Tuple(std::vector<BatchTree> elements);
  // The structure of `shape` with every leaf set to `batched`.
  static BatchTree Uniform(const Shape& shape, bool batched);

  bool is_tuple() const { return is_tuple_; }
  // For a leaf: whether it is batched.
  bool batched() const { return batched_; }
  const std::vector<BatchTree>& elements() const { return elements_; }
  const BatchTree& element(int64_t i) const { return elements_[static_cast<size_t>(i)]; }

  bool Any() const;  // some leaf is batched
  bool All() const;  // every leaf is batched
  // Leafwise "or"; both trees must have the same structure.
  BatchTree Union(const BatchTree& other) const;
  // True if every leaf batched here is batched in `other` too.
  bool IsSubsetOf(const BatchTree& other) const;
  // `shape` (the per-slice shape) with [batch_size] prepended to batched leaves.
  Shape Apply(const Shape& shape, int64_t batch_size) const;

  bool operator==(const BatchTree& other) const;
  bool operator!=(const BatchTree& other) const { return !(*this == other); }
  // "B", "-", or "(B, -)" for messages and cache keys.
  std::string ToString() const;

 private:
  bool is_tuple_ = false;
  bool batched_ = false;
  std::vector<BatchTree> elements_;
};

}  // namespace sharc::hlo
