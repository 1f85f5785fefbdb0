// Partitioner pass 2 of 3 (spmd/partition/partitioner.h): replaces every
// kSpmdReshard of a global module by the global-view collectives that carry
// it out (spmd/partition/reshard.h plans them): all-gather, all-slice,
// all-to-all, collective-permute, or a chain of them. A reshard between two
// layouts that hold the same data disappears. The last step keeps the
// reshard's name. Shapes stay global.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

absl::Status ReshardToCollectives(hlo::Module& module);

}  // namespace sharc::spmd
