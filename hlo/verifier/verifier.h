// The verifier: recomputes every instruction's shape with its op's own shape
// inference and checks structure (operand counts, attributes, called
// computations' signatures, definition order, shardings against the shape
// and the module's device count). It never changes the module.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

struct VerifyOptions {
  // Check shardings' device ids against the module's num_partitions.
  bool check_sharding_devices = true;
};

// Returns the first problem found as InvalidArgument, naming the
// instruction (its text and source location) and what was expected.
absl::Status VerifyModule(const Module& module, const VerifyOptions& options = {});

}  // namespace sharc::hlo
