// Moving whole values to and from the per-device values of a sharding: what
// `sharc run --devices N` does with its inputs and outputs, and what tests
// do to compare a partitioned run with the global one.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/sharding.h"

namespace sharc::spmd {

// Device `device`'s part of `value` under `sharding` (ceil-sized tiles; the
// padding past the array's end is zero).
absl::StatusOr<hlo::Literal> ShardLiteral(const hlo::Literal& value, const hlo::Sharding& sharding,
                                          int64_t device);

// The whole value of `shape` from every device's part (device d's value is
// `parts[d]`). Replicated values are read from device 0.
absl::StatusOr<hlo::Literal> AssembleLiteral(const std::vector<hlo::Literal>& parts,
                                             const hlo::Sharding& sharding, const hlo::Shape& shape);

}  // namespace sharc::spmd
