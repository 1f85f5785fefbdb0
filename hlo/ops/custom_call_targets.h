// The custom-call targets sharc gives meaning to, named once: the sharding
// annotation and propagation barriers (XLA's and Shardy's spellings), the
// manual-region markers shard_maps lower to, and (spmd_global_view.h) the
// partitioner's global-view steps. Every pass that recognises or emits one
// uses these names, so a misspelling is a compile error, not a silently
// skipped op.
#pragma once

#include <string_view>

#include "hlo/ir/instruction.h"
#include "hlo/ops/spmd_global_view.h"

namespace sharc::hlo {

// A value's sharding (jax.lax.with_sharding_constraint, XLA's annotation).
inline constexpr std::string_view kShardingTarget = "Sharding";
// Propagation barriers: no sharding crosses from the operand / to the user.
inline constexpr std::string_view kShardBarrierFromTarget = "ShardBarrierFrom";
inline constexpr std::string_view kShardBarrierToTarget = "ShardBarrierTo";
// Entering a manual region: global value -> per-device block.
inline constexpr std::string_view kFullToShardShapeTarget = "SPMDFullToShardShape";
// Leaving one: per-device blocks -> global value.
inline constexpr std::string_view kShardToFullShapeTarget = "SPMDShardToFullShape";

// XLA's memory-space annotations (host offloading: xla/service/memory_annotations.h
// and JAX's device_put to a memory kind): they say where a value lives, and
// its value is its operand's. sharc's devices have one memory.
inline constexpr std::string_view kMoveToHostTarget = "MoveToHost";
inline constexpr std::string_view kMoveToDeviceTarget = "MoveToDevice";
inline constexpr std::string_view kPinToDeviceTarget = "PinToDevice";
inline constexpr std::string_view kPinToDeviceSramTarget = "PinToDeviceSram";
inline constexpr std::string_view kAnnotateDevicePlacementTarget = "annotate_device_placement";

inline bool IsMemorySpaceAnnotation(std::string_view target) {
  return target == kMoveToHostTarget || target == kMoveToDeviceTarget ||
         target == kPinToDeviceTarget || target == kPinToDeviceSramTarget ||
         target == kAnnotateDevicePlacementTarget;
}

// Custom-calls whose result XLA's sharding propagation lays out like their
// first operand (its IsPassthroughCustomOps): a 64-bit value combined from
// two halves, a layout constraint, and (one operand of the result's rank)
// image resizes and Cholesky. They carry shardings through; the partitioner
// still runs them whole on replicated operands.
inline bool IsShardingPassthroughTarget(std::string_view target, bool one_operand_of_same_rank) {
  if (target == "X64Combine" || target == "LayoutConstraint") return true;
  return one_operand_of_same_rank &&
         (target == "ResizeNearest" || target == "ResizeBilinear" ||
          target == "ResizeNearestGrad" || target == "ResizeBilinearGrad" || target == "Cholesky");
}

// True for a custom-call to `target`.
inline bool IsCustomCallTo(const Instruction& inst, std::string_view target) {
  return inst.opcode() == Opcode::kCustomCall && inst.attr_string("custom_call_target") == target;
}

// Either manual-region marker.
inline bool IsManualRegionMarker(std::string_view target) {
  return target == kFullToShardShapeTarget || target == kShardToFullShapeTarget;
}

}  // namespace sharc::hlo
