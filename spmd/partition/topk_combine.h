// A topk split along its last dim (the one it selects from), as XLA
// partitions its TopK custom call: each device takes the top k of its own
// shard, the candidates (values, and indices shifted to global positions)
// are all-gathered along that dim, and a stable sort by value with the
// topk's order (larger or smaller first, NaN as the largest) followed by a
// slice of the first k picks the answer. Equal values keep the lower
// index first: the gathered candidates are in shard order and each shard's
// in index order among equals.
//   (bf16[64,40], s32[64,40]) topk(bf16[64,256000]) over 2 devices:
//     topk of bf16[64,128000] -> all-gather (bf16[64,80], s32[64,80]) -> sort -> slice
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir/instruction.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

// `local` is this device's topk of its shard (a tuple of values and local
// indices); `offset` its shard's first global position (s32[]); `groups`
// the devices that split the last dim, in shard order.
hlo::Instruction* CombineTopKCandidates(LocalBuilder& b, hlo::Instruction* local,
                                        hlo::Instruction* offset, int64_t k, bool largest,
                                        const std::vector<std::vector<int64_t>>& groups);

}  // namespace sharc::spmd
