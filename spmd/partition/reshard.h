// Resharding: turning a per-device value laid out by one sharding into the
// per-device value of another, with the cheapest collectives GSPMD would use:
//   same tiling, other device order   -> collective-permute
//   each device's new tile inside its old one -> local dynamic-slice
//   a split moving from one dim to another    -> all-to-all
//   tiling lost on some dims          -> all-gather within device groups
//   replicated -> tiled               -> dynamic-slice at partition offsets
// and, when nothing fits, all-gather to replicated followed by a slice.
// Uneven dims are padded to ceil(size / tiles) per device; padding content is
// unspecified.
#pragma once

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

absl::StatusOr<hlo::Instruction*> Reshard(LocalBuilder& builder, hlo::Instruction* local,
                                          const hlo::Shape& global_shape,
                                          const hlo::Sharding& from, const hlo::Sharding& to);

// Device groups for a collective along tile dim `dim` of a tiled sharding:
// devices that share every other tile index, ordered by their index on `dim`.
std::vector<std::vector<int64_t>> GroupsAlongDims(const hlo::Sharding& sharding,
                                                  const std::vector<int64_t>& dims);

// Per-device offsets of `sharding`'s tiles along `dim` of `shape`.
std::vector<int64_t> TileOffsets(const hlo::Sharding& sharding, const hlo::Shape& shape,
                                 int64_t dim, int64_t num_devices);

}  // namespace sharc::spmd
