// Whether a run fits this machine's memory, checked before anything runs,
// so that a program too large ends in a clear error instead of dying in the
// allocator or, with overcommit, in the OOM killer halfway through.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::tools {

// The machine's physical memory in bytes (0 if unknown), or
// $SHARC_MEMORY_LIMIT bytes when that is set and smaller.
int64_t PhysicalMemoryBytes();

// The interpreter materialises every value: a module one of whose values
// alone exceeds the memory is refused, naming it.
absl::Status CheckValuesFitInMemory(const hlo::Module& module);

// A partitioned run holds, at once, every in-process device's values (the
// per-device program's liveness peak plus its result's read-back copy,
// times the devices), the global inputs
// and the assembled global result, and with `with_reference` (--check) the
// reference's own values (the global program's peak). `prepared` is the
// module as it will be partitioned (PrepareModule done); its per-device
// peak is measured on a partitioned copy. Refused, with that breakdown, when the sum exceeds
// 85% of the memory.
absl::Status CheckRunFitsInMemory(const hlo::Module& prepared, int64_t devices,
                                  const hlo::Module& global, bool with_reference);

}  // namespace sharc::tools
