// The compile stages as the subcommands use them: propagate shardings over
// N devices, then partition. `sharc propagate`, `partition`, `report` and
// `compare` all go through here so they agree on what a module means.
#pragma once

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "spmd/propagation.h"

namespace sharc::tools {

// Applies `--devices N` (overriding the header's num_partitions) and runs
// propagation in place.
absl::StatusOr<spmd::PropagationResult> PropagateModule(hlo::Module& module,
                                                        std::optional<int64_t> devices);

// Propagates (unless `propagate` is false) and partitions a copy of `global`.
absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionGlobal(hlo::Module& global,
                                                             std::optional<int64_t> devices,
                                                             bool propagate = true);

// A copy of `module` with every sharding removed except those on the entry
// parameters and the entry root (the "unannotated" program of `compare`).
std::unique_ptr<hlo::Module> StripInternalAnnotations(const hlo::Module& module);

}  // namespace sharc::tools
