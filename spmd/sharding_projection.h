// Moving a sharding across an op through its factors (Shardy's "sharding
// projection"): the sharding of one tensor of an op says how each of its
// factors is split; those splits give the sharding of any other tensor of
// the op. Factors the other tensor lacks (a dot's contracting dim seen from
// its result) become replication; factors it alone has stay unsplit.
//
// The tile-assignment array is permuted, never rebuilt, so device order
// follows XLA's: projecting {devices=[2,2]0,1,2,3} through a reduce over dim 0
// gives {devices=[2,2]0,2,1,3 last_tile_dim_replicate}.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/sharding.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

// The sharding of the tensor with dims `to` implied by `from_sharding` on the
// tensor with dims `from`, under `rule`'s factors. Replicated and manual
// shardings project to themselves; maximal ones to nothing.
std::optional<hlo::Sharding> ProjectSharding(const hlo::Sharding& from_sharding,
                                             const DimFactors& from, const DimFactors& to,
                                             const ShardingRule& rule);

// How many ways each factor of `rule` is split by `sharding` on the tensor
// with dims `dims` (1 for factors it does not split).
std::vector<int64_t> FactorTileCounts(const hlo::Sharding& sharding, const DimFactors& dims,
                                      const ShardingRule& rule);

}  // namespace sharc::spmd
