// Custom-call targets the SPMD partitioner's passes leave in a global module
// between them (spmd/partition/partitioner.h): explicit reshards, the
// global-view collectives a reshard becomes, and the completion of partial
// sums. On the global value every one of them is the identity (their result
// is their operand), so a module between two partitioner passes still
// interprets to the same values; what they mean for devices is the change of
// sharding from their operand's to their own, which the last pass lowers to
// per-device collectives (Shardy's sdy.reshard / sdy.all_gather / ... play
// the same part).
#pragma once

#include <string_view>

namespace sharc::hlo {

// Any change of sharding; the reshard pass replaces it by the steps below.
inline constexpr std::string_view kSpmdReshard = "SpmdReshard";
// Tiling dropped on some dims: all-gather within the device groups.
inline constexpr std::string_view kSpmdAllGather = "SpmdAllGather";
// Each device's new tile inside its old one: a local dynamic-slice.
inline constexpr std::string_view kSpmdAllSlice = "SpmdAllSlice";
// A split moving from one dim to another: all-to-all.
inline constexpr std::string_view kSpmdAllToAll = "SpmdAllToAll";
// Same tiling, other device order: collective-permute.
inline constexpr std::string_view kSpmdCollectivePermute = "SpmdCollectivePermute";
// The operand holds per-device partial results of a split reduction;
// backend_config lists the replica groups that sum them (all-reduce) ...
inline constexpr std::string_view kSpmdAllReduce = "SpmdAllReduce";
// ... or that sum them and keep one block each along the dim their own
// sharding splits further (reduce-scatter).
inline constexpr std::string_view kSpmdReduceScatter = "SpmdReduceScatter";

// Partial values of unreduced groups (spmd/unreduced.h) summed into the
// whole value: an all-reduce over the operand's unreduced groups.
inline constexpr std::string_view kSpmdSumPartials = "SpmdSumPartials";
// The whole value split into partial values of the result's unreduced
// groups: each group's first device keeps it, the others hold zeros.
inline constexpr std::string_view kSpmdSplitIntoPartials = "SpmdSplitIntoPartials";

inline bool IsSpmdGlobalViewTarget(std::string_view target) {
  return target == kSpmdReshard || target == kSpmdAllGather || target == kSpmdAllSlice ||
         target == kSpmdAllToAll || target == kSpmdCollectivePermute ||
         target == kSpmdAllReduce || target == kSpmdReduceScatter ||
         target == kSpmdSumPartials || target == kSpmdSplitIntoPartials;
}

}  // namespace sharc::hlo
