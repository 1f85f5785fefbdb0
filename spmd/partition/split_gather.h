// A gather whose operand stays split along a collapsed dim the indices
// address (GSPMD's "index parallel" gather over the operand's shards): each
// device gathers the rows its shard holds and zeroes the others, and an
// all-reduce (inserted before, by insert-reshards: the dim is a reduction
// factor of the gather's rule) adds the partial results.
//
// Before (global view, operand f32[8,4] split 4 ways on dim 0):
//   %g.partial = f32[3,4] gather(%table, %idx), offset_dims={1}, collapsed_slice_dims={0},
//                start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
//   %g = f32[3,4] custom-call(%g.partial), custom_call_target="SpmdAllReduce"
// After (per device, %table f32[2,4]):
//   %clamped = s32[3,1] clamp(%zero, %idx, %seven)       ; gather's own clamp, on global rows
//   %local = s32[3,1] subtract(%clamped, %offset)          ; rows of this device's shard
//   %g.partial = f32[3,4] gather(%table, %local), ...
//   %mine = pred[3] and(compare(%local >= 0), compare(%local < 2))
//   %g.partial.masked = f32[3,4] select(broadcast(%mine), %g.partial, zeros)
//   %g = f32[3,4] all-reduce(%g.partial.masked), to_apply=add
#ifndef SHARC_SPMD_PARTITION_SPLIT_GATHER_H_
#define SHARC_SPMD_PARTITION_SPLIT_GATHER_H_

#include <vector>

#include "hlo/ir/instruction.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

// True if `inst` is a gather whose operand sharding splits a dim that
// start_index_map addresses (the rule lets only collapsed ones split).
bool GathersFromSplitIndexedDim(const hlo::Instruction& inst);

// Rewrites operands[1] (the local indices) to rows of this device's shard
// and returns the pred mask over the indices' batch dims of the rows this
// device holds.
hlo::Instruction* LocalizeSplitGatherIndices(LocalBuilder& b, const hlo::Instruction& inst,
                                             std::vector<hlo::Instruction*>& operands);

// Zeroes the rows of `gathered` (the local gather) outside this device's
// shard, by `mask` from LocalizeSplitGatherIndices.
hlo::Instruction* MaskSplitGather(LocalBuilder& b, const hlo::Instruction& inst,
                                  hlo::Instruction* gathered, hlo::Instruction* mask);

}  // namespace sharc::spmd

#endif  // SHARC_SPMD_PARTITION_SPLIT_GATHER_H_
