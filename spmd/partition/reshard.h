// Resharding: changing a value's sharding with the cheapest collectives GSPMD
// would use. It is planned on shardings alone, as a list of global-view steps
// (spmd/partition/global_view_ops.h), and each step is lowered to per-device
// instructions separately:
//   same tiling, other device order            -> collective-permute
//   each device's new tile inside its old one  -> all-slice (local dynamic-slice)
//   splits moving between dims                 -> all-to-all (reshard_all_to_all.h)
//   tiling lost on some dims                   -> all-gather within device groups
//   maximal, read by other devices             -> broadcast from its device
//   replicated -> tiled                        -> all-slice at partition offsets
// and, when nothing fits, all-gather to replicated followed by an all-slice.
// Uneven dims are padded to ceil(size / tiles) per device; padding content is
// unspecified.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

// One global-view step of a reshard: the collective kind (a target from
// global_view_ops.h) and the sharding the value has after it.
struct ReshardStep {
  std::string_view target;
  hlo::Sharding after;
};

// Whether a value laid out by `from` already holds what `to` asks of every
// device (maximal and unknown hold whole values, like replicated; but a
// maximal value is right only on its own device, so it reaches any other
// layout by a broadcast from there).
bool NeedsNoReshard(const hlo::Sharding& from, const hlo::Sharding& to);

// The steps taking an array value of `global_shape` from `from` to `to`
// (empty when the layouts already agree). Tuples are resharded per element by
// the caller.
absl::StatusOr<std::vector<ReshardStep>> PlanReshard(const hlo::Shape& global_shape,
                                                     const hlo::Sharding& from,
                                                     const hlo::Sharding& to);

// Emits the per-device instructions of one step: `local` is this device's
// value laid out by `from`; the result is laid out by `step.after`.
absl::StatusOr<hlo::Instruction*> LowerReshardStep(LocalBuilder& builder, hlo::Instruction* local,
                                                   const hlo::Shape& global_shape,
                                                   const hlo::Sharding& from,
                                                   const ReshardStep& step);

// Device groups for a collective along tile dim `dim` of a tiled sharding:
// devices that share every other tile index, ordered by their index on `dim`.
std::vector<std::vector<int64_t>> GroupsAlongDims(const hlo::Sharding& sharding,
                                                  const std::vector<int64_t>& dims);

// Per-device offsets of `sharding`'s tiles along `dim` of `shape`.
std::vector<int64_t> TileOffsets(const hlo::Sharding& sharding, const hlo::Shape& shape,
                                 int64_t dim, int64_t num_devices);

}  // namespace sharc::spmd
