// A per-device program run across the processes of `mpirun -np R`: every
// process compiled the same program; process 0's inputs reach the others by
// broadcast, each process runs its N/R devices with an MpiCommunicator, and
// the devices' results come back to process 0.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"
#include "runtime/executable.h"

namespace sharc::driver {

// Returns, on process 0, every device's result (in device order); the other
// processes get an empty vector. `entry` is the propagated global entry
// (its parameters' shardings split the inputs). Builds without MPI refuse.
absl::StatusOr<std::vector<hlo::Literal>> RunOnMpiProcesses(
    const hlo::Module& per_device, const hlo::Computation& entry,
    const std::vector<hlo::Literal>& args, const runtime::Executable& executable,
    int64_t num_devices, absl::Duration timeout);

}  // namespace sharc::driver
