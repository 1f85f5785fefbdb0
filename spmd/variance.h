// Device-variance type checking of shard_map bodies (DESIGN.md, "shard_map
// and device variance"). It lives in spmd/ beside the other passes over
// manual regions: it runs on the global module before lowering, and its
// results (Instruction::variance) are what autodiff's transposes read.
//
// Every body value's variance (the mesh axes it may vary over) comes from
// the one analysis autodiff reads too (hlo/analysis/device_variance_analysis.h:
// parameters the axes of their in_spec, named collectives per
// hlo/ops/named_collectives.h, data flow through tuples, calls, loops and
// branches per their declared edges, every other op the union of its
// operands'). This pass then makes the program agree with it: where an op's
// operands disagree, a collective needs a varying operand, or data flow
// joins values of different variance (a loop's initial carry and its step,
// branch results), a pbroadcast is inserted; an output varying over an axis
// its out_spec does not name is an error.
//
// Before:  %t = (s32[], f32[2]) tuple(%z, %a)          // %a invariant
//          %l = while(%t), body adds axis_index() to element 1
// After:   %a.pbroadcast.0 = f32[2]{V:x} pbroadcast(%a), axes={x}
//          %t = (s32[], f32[2]){V:x} tuple(%z, %a.pbroadcast.0)
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

struct VarianceOptions {
  // Insert pbroadcast where operands' variance differs, where a collective
  // gets an operand that is not varying over its axes, and where an output
  // varies over fewer axes than its out_spec names (JAX's auto_pcast). When
  // false those mismatches are errors naming the op and the axes.
  bool insert_pbroadcast = true;
};

// Types every shard_map body in `module` (bodies with check_variance=false
// get empty variance and no checks, JAX's check_vma=False).
absl::Status InferDeviceVariance(hlo::Module& module, const VarianceOptions& options = {});

// Types the body of one shard_map (what InferDeviceVariance does for each):
// the frontend calls it as soon as it emits a shard_map, so a bad out_spec
// is reported at the user's line rather than when the program is compiled.
absl::Status InferShardMapVariance(hlo::Instruction& shard_map,
                                   const VarianceOptions& options = {});

}  // namespace sharc::spmd
