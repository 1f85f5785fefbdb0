// Lowers shard_map to the partitioner's manual regions: each operand goes
// through a Sharding custom-call (its in_spec) and SPMDFullToShardShape, the
// body is inlined with sharding={manual}, each named-axis collective becomes
// an XLA collective whose replica groups are the mesh-axis groups, and each
// result leaves through SPMDShardToFullShape with its out_spec's sharding.
// Call it before sharding propagation, where the MapReduce lowering runs.
//
// Before (mesh={i=2}; %body is `ROOT %s = f32[2] psum(%a), axes={i}`):
//   ROOT %out = f32[2] shard_map(%x), in_specs={P(i)}, out_specs={P()}, to_apply=%body
// After:
//   %Sharding.0 = f32[4] custom-call(%x), custom_call_target="Sharding",
//                   sharding={devices=[2]0,1}
//   %SPMDFullToShardShape.1 = f32[2] custom-call(%Sharding.0),
//       custom_call_target="SPMDFullToShardShape", sharding={manual}
//   %all-reduce.2 = f32[2] all-reduce(%SPMDFullToShardShape.1), channel_id=1,
//       replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sharc.add.f32,
//       sharding={manual}
//   ROOT %SPMDShardToFullShape.3 = f32[2] custom-call(%all-reduce.2),
//       custom_call_target="SPMDShardToFullShape", sharding={replicated}
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
