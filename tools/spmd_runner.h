// Runs a global (annotated) module on N simulated devices: sharding
// propagation, SPMD partitioning, splitting the global inputs by the entry
// parameters' shardings, the interpreter's SPMD mode, and reassembling the
// global result. This is `sharc run --devices N`; `compare` will reuse it.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"

namespace sharc::tools {

// `global` must be verified. Compile errors (propagation, partitioning,
// inputs that do not fit the shardings) come back as InvalidArgument or
// whatever the pass returned; run failures are wrapped as Aborted so the
// caller can tell them apart.
absl::StatusOr<hlo::Literal> RunPartitioned(const hlo::Module& global,
                                            const std::vector<hlo::Literal>& args,
                                            int64_t num_devices);

}  // namespace sharc::tools
