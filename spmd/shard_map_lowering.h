// Lowers shard_map to the partitioner's manual regions: each operand goes
// through a Sharding custom-call (its in_spec) and SPMDFullToShardShape, the
// body is inlined with sharding={manual}, each named-axis collective becomes
// an XLA collective whose replica groups are the mesh-axis groups, and each
// result leaves through SPMDShardToFullShape with its out_spec's sharding.
// Call it before sharding propagation, where the MapReduce lowering runs.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

// Type-checks every shard_map body (spmd/variance.h) and replaces every
// shard_map in `module`. A module without shard_map is left unchanged. The
// module's num_partitions becomes the mesh's device count when it was 1;
// any other disagreement is an error, as is a shard_map nested in a body.
// Loops, branches and calls in a body run per device: their computations
// are cloned with manual shardings and their named collectives lowered.
absl::Status LowerShardMaps(hlo::Module& module);

}  // namespace sharc::spmd
