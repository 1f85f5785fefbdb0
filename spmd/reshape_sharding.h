// How a sharding crosses a reshape, following GSPMD: the tiling of a dim that
// is split lands on its major pieces; a count that does not divide the first
// piece keeps the gcd and replicates the rest; merged dims keep their tiling
// only if the more minor ones are unsplit; dims that cannot be matched become
// replication. The reshape's factor rule (spmd/rules/shape_rules.cc) states
// which dims correspond; this walk decides how much tiling survives.
#pragma once

#include <optional>

#include "hlo/ir/shape.h"
#include "hlo/ir/sharding.h"

namespace sharc::spmd {

// The sharding of `target` implied by `sharding` on `source` (same element
// count). Never fails: when nothing survives, the result is replicated.
hlo::Sharding PropagateThroughReshape(const hlo::Shape& source, const hlo::Shape& target,
                                      const hlo::Sharding& sharding);

// One attempt of the walk for the whole shape (XLA's ReshapeSharding);
// nothing if the tiling cannot be carried.
std::optional<hlo::Sharding> ReshapeSharding(const hlo::Shape& source, const hlo::Shape& target,
                                             const hlo::Sharding& sharding);

}  // namespace sharc::spmd
