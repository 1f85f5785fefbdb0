// JAX's HLO under Shardy (its default partitioner) carries shardings in
// Shardy's round-trip form: meshes in the module's `xla.sdy.meshes`
// frontend attribute, each value's sharding in an `xla.sdy.sharding`
// frontend attribute, and every shard_map as a call between two shape-
// changing custom-calls. This pass turns such a module into GSPMD's form,
// which the rest of sharc reads (XLA's Shardy export for GSPMD does the
// same):
//
//   before:
//     HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>}}
//     %body (p: f32[2,8]) -> f32[2,8] { ... }
//     %g = f32[2,8] custom-call(%a), custom_call_target="xla.sdy.GlobalToLocalShape",
//            frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>",
//                                 xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
//     %c = f32[2,8] call(%g), to_apply=%xla.sdy.manual_computation_body
//     %l = f32[8,8] custom-call(%c), custom_call_target="xla.sdy.LocalToGlobalShape",
//            frontend_attributes={xla.sdy.out_shardings=..., xla.sdy.manual_axes=...}
//   after:
//     HloModule m, num_partitions=4, ...
//     %s = f32[8,8] custom-call(%a), custom_call_target="Sharding", sharding={devices=[4,1]<=[4]}
//     %g = f32[2,8] custom-call(%s), custom_call_target="SPMDFullToShardShape", sharding={manual}
//     ... %body's instructions, inlined ...
//     %r = f32[2,8] custom-call(%root), custom_call_target="Sharding", sharding={manual}
//     %l = f32[8,8] custom-call(%r), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
//
// Also: `xla.sdy.sharding` becomes the instruction's sharding (inside a
// shard_map body with the region's manual axes as a manual subgroup; open
// dims of a "Sharding" custom-call become its `unspecified_dims`), taking
// precedence over a `sharding=` XLA's export wrote beside it;
// `xla.sdy.FuncResultSharding` becomes a "Sharding" custom-call;
// `xla.sdy.ShardingGroup` becomes a `shard_as` group on its operand;
// `xla.sdy.PropagationBarrier` is dropped (GSPMD has no directed barrier);
// a header without a device count gets the mesh's. A module without Shardy
// attributes is left alone.
#pragma once

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

absl::StatusOr<bool> ImportShardyRoundTrip(Module& module);

}  // namespace sharc::hlo
