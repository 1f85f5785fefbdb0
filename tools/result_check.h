// How `sharc run --check` compares a partitioned run with the global
// program. A partitioned reduction adds its partial results in another order
// (and a narrow float type rounds each partial result), so floats agree only
// to a tolerance that follows the type's precision and the length of the
// module's longest reduction; integers and pred must agree exactly.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"

namespace sharc::tools {

struct CheckTolerance {
  // |got - want| <= relative * (|want| + scale), where scale is the mean
  // magnitude of the result leaf: a sum that cancels to near zero is judged
  // against the size of the values it added, as its rounding errors are.
  double relative = 0;
};

// OK if --check has a reference for the module: the global (unpartitioned)
// program, or for a module with manual regions the per-device reference
// (per_device_reference.h). Collectives and partition-id outside manual
// regions see one device in the global run and N in the partitioned one:
// Unimplemented, naming the instruction.
absl::Status HasGlobalReference(const hlo::Module& module);

// The number of terms the module's longest reduction adds (dot contracting
// dims, reduce dims, reduce-window windows), at least 1.
int64_t LongestReduction(const hlo::Module& module);

// The tolerance for a result of float `type` when the longest reduction adds
// `reduction_length` terms.
CheckTolerance ToleranceFor(hlo::PrimitiveType type, int64_t reduction_length);

// The first element of `got` that differs from `want` beyond the tolerance,
// described as "WHERE element I: partitioned A, global B", or "" if none.
// `max_diff` gets the largest absolute difference seen.
std::string FirstMismatch(const hlo::Literal& got, const hlo::Literal& want,
                          const std::string& where, int64_t reduction_length, double& max_diff);

}  // namespace sharc::tools
