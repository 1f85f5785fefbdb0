// When the f32 GEMM of codegen/dot_lowering.cc packs a transposed lhs (its
// contracting dim the outer one, [k, m]) whole before the product: from
// 1 MiB of it, counted as f32. Smaller ones are read in place (session 17:
// packing 256 KiB gained nothing). canonicalize-dots reads the same rule to
// choose which operand of a weight gradient becomes that lhs.
#pragma once

#include <cstdint>

namespace sharc::codegen {

inline constexpr int64_t kPackedTransposedLhsBytes = int64_t{1} << 20;

// Whether a transposed lhs of `elements` values is packed whole.
inline bool PacksTransposedLhs(int64_t elements) { return elements * 4 >= kPackedTransposedLhsBytes; }

}  // namespace sharc::codegen
