// Human-readable summaries of result arrays for `sharc run` (and later
// `compare`): small arrays in full, large ones as a prefix and statistics.
#pragma once

#include <string>
#include <vector>

#include "hlo/ir/literal.h"

namespace sharc::tools {

// Arrays with at most this many elements are printed in full.
inline constexpr int64_t kFullPrintLimit = 64;

// The array leaves of `literal` in order (nested tuples flattened).
std::vector<const hlo::Literal*> FlattenLeaves(const hlo::Literal& literal);

// For an array: "f32[2] {1, 2}" when small (rank >= 2 arrays put one row
// per line after the shape), otherwise
// "f32[1000] first 8: {..., ...} min=... max=... mean=..."
std::string SummarizeArray(const hlo::Literal& array);

}  // namespace sharc::tools
