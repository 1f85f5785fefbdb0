// Partitioner pass 2 of 3 (spmd/partition/partitioner.h): replaces every
// kSpmdReshard of a global module by the global-view collectives that carry
// it out (spmd/partition/reshard.h plans them): all-gather, all-slice,
// all-to-all, collective-permute, or a chain of them. A reshard between two
// layouts that hold the same data disappears. The last step keeps the
// reshard's name. Shapes stay global.
//
// Before:  ROOT %t = f32[4,8] custom-call(%t.local), custom_call_target="SpmdReshard", ...
// After:   ROOT %t = f32[4,8] custom-call(%t.local), custom_call_target="SpmdAllToAll", ...
// (the split moves from dim 1 to dim 0: one all-to-all).
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

absl::Status ReshardToCollectives(hlo::Module& module);

}  // namespace sharc::spmd
