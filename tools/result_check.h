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
// program, or the per-device reference (per_device_reference.h) when
// NeedsPerDeviceReference. A partition-id outside manual regions has none
// (the global run has one device, the partitioned one N): Unimplemented,
// naming the instruction.
absl::Status HasGlobalReference(const hlo::Module& module);

// Whether --check compares with the per-device reference (everything
// replicated but manual regions and the program's own collectives, run on
// every device) rather than the global program: the module has manual
// regions, or collectives of its own that devices run together (an
// all-reduce of the program, not of a shard_map body).
bool NeedsPerDeviceReference(const hlo::Module& module);

// The devices a per-device program runs on when the command line does not
// say: its header's (or its collectives', module_loader.h) count when the
// program has collectives of its own that span devices (an all-reduce
// over replica groups: on one device its groups name devices that do not
// exist), else 1 (a global program, run as written).
int64_t DefaultRunDevices(const hlo::Module& module);

// Whether the reference interpreter would take minutes on the global
// program: the cost model counts more than 2e8 FLOPs plus bytes accessed
// over its instructions (a loop body counted once). --check-reference=auto
// then compiles the global program for one device instead.
bool InterpreterReferenceIsSlow(const hlo::Module& module);

// The number of terms the module's longest reduction adds (dot contracting
// dims, reduce dims, reduce-window windows), at least 1.
int64_t LongestReduction(const hlo::Module& module);

// The tolerance for a result of float `type` when the longest reduction adds
// `reduction_length` terms and the partitioned run spans `devices` devices
// (whose partial results of a split reduction add up in `type`).
CheckTolerance ToleranceFor(hlo::PrimitiveType type, int64_t reduction_length,
                            int64_t devices = 1);

// The first element of `got` that differs from `want` beyond the tolerance,
// described as "WHERE element I: partitioned A, global B", or "" if none.
// `max_diff` gets the largest absolute difference seen.
std::string FirstMismatch(const hlo::Literal& got, const hlo::Literal& want,
                          const std::string& where, int64_t reduction_length, double& max_diff,
                          int64_t devices = 1);

}  // namespace sharc::tools
