// Resharding by all-to-all, as XLA's partitioner does it
// (PartitionedHlo::ReshardWithAllToAll): when the source and target tile the
// same dims with the same tile counts but in other places, the counts move
// between pairs of dims, each pair (s, t) taking the g = S/T minor part of
// dim s's S tiles over to dim t (T tiles there before, S after).
//
//   f32[16,16] {devices=[4,1]<=[4]} -> {devices=[1,4]<=[4]}:
//     one all-to-all over the 4 devices (split dim 1, concatenate dim 0)
//   f32[8,8,8] {devices=[2,2,1]<=[4]} -> {devices=[1,1,4]<=[4]}...  no pair fits: none
//   [1,4,2,1] -> [2,1,1,4] (pairs (2,0) and (1,3)): one all-to-all for both
//
// Pairs whose dims divide evenly go in one all-to-all (two or more of
// them); the others one at a time. When no swaps reach the target but one
// dim's count falls by g and another's rises by g (even dims), the minor g
// part of the first dim's tiles moves to the second in one all-to-all (XLA
// gets there through reshapes, ComplexReshard*):
//   f32[8,32] {devices=[8,1]<=[8]} -> {devices=[2,4]<=[8]}
// The device order the all-to-alls leave is fixed by a final
// collective-permute when it differs from the target's.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/local_builder.h"
#include "spmd/partition/reshard.h"

namespace sharc::spmd {

// The global-view steps (all-to-alls, then a collective-permute if needed)
// from `from` to `to`, or nullopt when all-to-alls cannot get there.
std::optional<std::vector<ReshardStep>> PlanAllToAllReshard(const hlo::Shape& global,
                                                            const hlo::Sharding& from,
                                                            const hlo::Sharding& to);

// Lowers one all-to-all step planned above: `local` is laid out by `from`,
// the result by `after`.
absl::StatusOr<hlo::Instruction*> LowerAllToAllStep(LocalBuilder& b, hlo::Instruction* local,
                                                    const hlo::Shape& global,
                                                    const hlo::Sharding& from,
                                                    const hlo::Sharding& after);

}  // namespace sharc::spmd
