// The SPMD partitioner: turns a global module whose values carry shardings
// into the one per-device program every device runs, with the collectives
// that make it compute the global program. The steps, per instruction:
//   1. choose how to split the op (spmd/partition/strategy.h, from the op's
//      factor rule);
//   2. reshard operands to what that choice needs, as collectives
//      (spmd/partition/reshard.h);
//   3. emit the op on per-device shapes, masking padding where it would
//      change a result, and all-reduce split reduction factors;
//   4. reshard the result to the instruction's own sharding.
// Entry parameters and results are per-device values (XLA's
// allow_module_signature_change). Local values keep their global
// instruction's name so a reader can follow them.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

struct PartitionOptions {
  // Devices to partition for; 0 = the module's num_partitions.
  int64_t num_devices = 0;
  // What to do with instructions that have no sharding: treat them as
  // replicated (XLA's behaviour after propagation), or refuse.
  enum class Unsharded { kReplicate, kError } unsharded = Unsharded::kReplicate;
};

absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionModule(const hlo::Module& global,
                                                             const PartitionOptions& options = {});

}  // namespace sharc::spmd
