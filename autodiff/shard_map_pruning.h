// Dropping the shard_map outputs a derivative does not read. Linearizing a
// shard_map gives a primal shard_map returning the outputs and the
// residuals; a gradient reads only the residuals, so the forward work that
// only fed the outputs (the psum of a loss, say) would still run, and
// partition into an all-reduce nobody needs. The body is the same on every
// device, so its dead named collectives can go too (the generic clean-up
// keeps collectives, which it cannot know are dropped on every device).
#pragma once

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/computation.h"

namespace sharc::autodiff {

// Prunes the unread outputs of the shard_maps in `computation` whose body
// is in `own_bodies` (computations the transform created) and called by
// that shard_map alone.
void PruneShardMapOutputs(hlo::Computation& computation,
                          const absl::flat_hash_set<const hlo::Computation*>& own_bodies);

}  // namespace sharc::autodiff
