// Unreduced shardings (XLA's `{unreduced}` and `last_tile_dims={unreduced}`):
// the devices of an unreduced group each hold a partial value of the same
// tile, and the value is their sum. A dot whose contracting dim is split
// over exactly those groups leaves such partial sums, and an unreduced
// result keeps them instead of all-reducing.
//
//   {devices=[2,1,2]<=[4] last_tile_dims={unreduced}} on f32[8,4]:
//     rows 0-3 = part(device 0) + part(device 1), rows 4-7 = part(2) + part(3)
//
// The partitioner computes with the reduced form (the groups replicated) and
// converts at the edges: partial -> whole is an all-reduce over the groups;
// whole -> partial keeps the value on each group's first device and zeros on
// the others (so the sum is the value).
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir/sharding.h"

namespace sharc::spmd {

// `sharding` with its unreduced groups made replication groups
// ({unreduced} -> {replicated}); tuples leaf by leaf.
hlo::Sharding ReducedForm(const hlo::Sharding& sharding);

// The groups of devices whose partial values sum to one tile, each ordered
// along the unreduced dim; empty when `sharding` (not a tuple) has none.
std::vector<std::vector<int64_t>> UnreducedGroups(const hlo::Sharding& sharding,
                                                  int64_t num_devices);

// True for the one device of each unreduced group that holds the whole value
// when a whole value becomes partial values (the group's first device).
bool HoldsWholeValue(const hlo::Sharding& sharding, int64_t device);

// True for the devices whose partial values are summed to assemble the
// value: every member of the unreduced groups of one copy (the first index
// along the replication dims).
bool CountsInSum(const hlo::Sharding& sharding, int64_t device);

}  // namespace sharc::spmd
