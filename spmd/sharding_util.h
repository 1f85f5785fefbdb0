// Comparisons and merges of shardings used by propagation: which of two
// shardings is more specific, whether one tiling refines another, and XLA's
// merge of two compatible partially replicated shardings.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/shape.h"
#include "hlo/ir/sharding.h"

namespace sharc::spmd {

// XLA's IsShardingMoreSpecific: more data tiles wins; any tiled sharding beats
// a tile-maximal one, and anything but replicated beats replicated. Manual
// beats tile-maximal and is otherwise never more specific. Tuples: no leaf
// worse, one leaf better.
bool IsMoreSpecific(const hlo::Sharding& candidate, const hlo::Sharding& current);

// True if every device's tile under `candidate` lies inside its tile under
// `current` for an array of `shape` (a refinement of the same layout).
bool IsSubTilingOrEqual(const hlo::Shape& shape, const hlo::Sharding& candidate,
                        const hlo::Sharding& current);

// Merges two partially replicated shardings over the same devices whose
// tiled dims do not conflict: tile counts are the per-dim maxima and each
// merged tile is held by the devices both shardings put there. Returns
// nothing if they conflict or the merge would not add tiles.
// With `b_may_be_tiled`, `b` may also be fully tiled (XLA's
// MergeShardingIfCompatible, where only the destination `a` must be partial).
std::optional<hlo::Sharding> MergeCompatible(const hlo::Sharding& a, const hlo::Sharding& b,
                                             bool b_may_be_tiled = false);

// True if every data dim of `shape` is divisible by its tile count.
bool EvenlyDivides(const hlo::Shape& shape, const hlo::Sharding& sharding);

// Replicates the given data dims of a tiled sharding (their tiling becomes
// part of the replication subgroup), keeping the device array's order.
// The instruction's sharding, or replicated if it has none (what an
// unannotated value is after propagation).
hlo::Sharding ShardingOrReplicated(const hlo::Instruction& inst);

// Manual, or a tuple of manual leaves: a value of a manual region, which is
// already per device.
bool IsManualLike(const hlo::Sharding& sharding);
// The same for a value of `shape`, whose token leaves do not count (they
// carry no data: XLA's manual infeed writes its token {maximal device=0}).
bool IsManualLike(const hlo::Sharding& sharding, const hlo::Shape& shape);

hlo::Sharding ReplicateDims(const hlo::Sharding& sharding, const std::vector<int64_t>& dims);

// The minor g of data dim `from`'s tiles become the minor part of data dim
// `to`'s (device order kept): `from` keeps S/g tiles, `to` gets T*g. With g
// all of `from`'s tiles, XLA's MoveAndMergeShardingTiles; it is also the
// layout an all-to-all moving g tiles leaves (reshard_all_to_all.h).
//   {devices=[1,2,4]<=[8]}, from 2, to 1, g 4 -> {devices=[1,8,1]<=[8]}
hlo::Sharding MoveTiles(const hlo::Sharding& sharding, int64_t from, int64_t to, int64_t g);


}  // namespace sharc::spmd
