// Out-of-bounds start indices in the transposes of gather and scatter.
// gather clamps a start index so its slice fits in the operand, scatter
// skips an update whose window would not fit; a transpose that swaps one for
// the other must clamp or mask explicitly, or the cotangent lands in the
// wrong place. When the indices are a constant already in bounds (the usual
// case), nothing is emitted.
#pragma once

#include <cstdint>
#include <vector>

#include "autodiff/builder.h"

namespace sharc::autodiff {

// The start indices of a gather or scatter: `upper[k]` is the largest start
// whose window fits along the operand dim that index vector component k
// addresses.
struct StartIndices {
  Instruction* indices = nullptr;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> upper;

  // True when `indices` is a constant with every start in [0, upper].
  bool KnownInBounds() const;
  // The indices clamped into [0, upper] (gather's reading of them).
  Instruction* Clamped(Emitter& e) const;
  // pred over the indices' dims other than index_vector_dim: whether each
  // start is in bounds (scatter's reading of them); nullptr when all are
  // known to be.
  Instruction* InBounds(Emitter& e) const;
};

}  // namespace sharc::autodiff
