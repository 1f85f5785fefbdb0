// The register tile of sharc's contractions (dot's GEMM, convolution): an
// output block of `rows` x `vectors` vector accumulators that fills the
// register file, with one register per rhs vector of a k step and one for
// the lhs broadcast.
#pragma once

#include <cstdint>

namespace sharc::codegen {

struct RegisterTile {
  int vectors = 0;  // 0: no tile fits the result
  int rows = 0;
};

// The tile for an [m, n] result (n the vectorised, innermost dim) with
// `lanes` per vector and `vector_registers` registers, or vectors == 0 when
// the result is smaller than every tile.
RegisterTile ChooseRegisterTile(int64_t m, int64_t n, int lanes, int vector_registers);

}  // namespace sharc::codegen
