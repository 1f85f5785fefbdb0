// Custom-call targets whose value is their operand, defined once for every
// concern that must know them (shape inference and the interpreter in
// control_flow_ops.cc, vmap, the Halide lowering).
#pragma once

#include <string_view>

#include "hlo/ops/custom_call_targets.h"

namespace sharc::hlo {

// The sharding annotation and the propagation barriers.
inline bool IsShardingAnnotationTarget(std::string_view target) {
  return target == kShardingTarget || target == kShardBarrierFromTarget ||
         target == kShardBarrierToTarget;
}

// Those, the SPMD partitioner's global-view ops and the memory-space
// annotations (MoveToHost, MoveToDevice, ...).
inline bool IsIdentityCustomCallTarget(std::string_view target) {
  return IsShardingAnnotationTarget(target) || IsSpmdGlobalViewTarget(target) ||
         IsMemorySpaceAnnotation(target);
}

}  // namespace sharc::hlo
