// Internal to codegen/: how a row-major reshape maps dims (the Halide
// lowering of reshape, and the passes that move ops across one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sharc::codegen {

// A reshape maps indices group by group. Leaving out dims of size 1, the
// operand's and the result's dims split into the shortest runs of equal
// product (for f32[6,4,1] -> f32[2,3,4]: {6} ~ {2,3} and {4} ~ {4}); a run
// of one dim on each side maps its index straight through, others go
// through that run's flat index, and an operand dim of size 1 reads 0. No
// division touches an index outside its run, so Halide's bounds stay exact
// where a reshape only adds or drops unit dims (the keepdims pattern
// reshape(reduce) -> [rows, 1] -> [rows], which through a flat index
// `row % rows` made every row recompute every row's reduction).
struct ReshapeRun {
  std::vector<size_t> in, out;  // dims of the operand and of the result
};

std::vector<ReshapeRun> ReshapeRuns(const std::vector<int64_t>& in_dims,
                                    const std::vector<int64_t>& out_dims);

}  // namespace sharc::codegen
