// A while loop whose body holds a channel instruction (a send / recv that is
// not a host transfer, or an all-reduce / reduce-scatter with a channel_id)
// assigned to one device runs on that device: every instruction of the body
// assigned to a single device, the body's root and the while itself must be
// on the same one, as GSPMD's propagation requires before it starts.
//
//   %body {                                       (with %while on device 0)
//     %count = ... sharding={maximal device=0}     error: '%count' is on device 0,
//     %recv = ... recv(...), sharding={maximal device=1}  which conflicts with
//   }                                              device 1 of '%recv'
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

// InvalidArgument naming the first instruction (with its location) whose
// device conflicts with its loop's channel instruction.
absl::Status CheckWhileChannelDevices(const hlo::Module& module);

}  // namespace sharc::spmd
