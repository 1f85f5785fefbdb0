#include "spmd/partition/reshard.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/spmd_global_view.h"
#include "spmd/partition/reshard_all_to_all.h"
#include "spmd/sharding_util.h"
#include "spmd/unreduced.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Shape;
using hlo::Sharding;

namespace {

// Maximal and unknown shardings hold whole values like replicated ones: in a
// partitioned program every device computes them.
Sharding AsDataLayout(const Sharding& s) {
  if (s.IsMaximal() || s.IsUnknown()) return Sharding::Replicated();
  return s;
}

// Replicated -> tiled: pad to whole tiles, then take this device's tile.
Instruction* SliceToTiled(LocalBuilder& b, Instruction* full, const Shape& global,
                          const Sharding& to) {
  Shape shard = to.ShardShape(global);
  std::vector<int64_t> high(static_cast<size_t>(global.rank()), 0);
  for (int64_t d = 0; d < global.rank(); ++d) {
    high[d] = shard.dim(d) * to.TileCount(d) - global.dim(d);
  }
  Instruction* padded = b.PadHigh(full, high);
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < global.rank(); ++d) {
    starts.push_back(to.TileCount(d) == 1
                         ? b.ConstantS32(0)
                         : b.PerDeviceValue(TileOffsets(to, global, d, b.num_devices()), "offset"));
  }
  return b.DynamicSlice(padded, starts, shard.dims());
}

// How pieces that never overlap combine exactly in an all-reduce: OR for
// pred, + for integers (the others hold 0), max for floats (the others
// hold -inf: adding zeros would turn -0.0 into +0.0; max keeps it, and a
// NaN). Complex values and 8-bit floats (no -inf in some) are gathered.
struct Combine {
  hlo::Opcode op;
  double filler;
};
std::optional<Combine> ExactCombine(hlo::PrimitiveType type) {
  if (type == hlo::PrimitiveType::kPred) return Combine{hlo::Opcode::kOr, 0};
  if (hlo::IsInteger(type)) return Combine{hlo::Opcode::kAdd, 0};
  if (hlo::IsFloatingPoint(type) && hlo::ByteWidth(type) >= 2) {
    return Combine{hlo::Opcode::kMaximum, -std::numeric_limits<double>::infinity()};
  }
  return std::nullopt;
}

// A maximal value is right only on its device: the others compute it too,
// but from inputs that XLA leaves undefined there (a maximal parameter's data
// lives on its device, a custom-call or infeed runs for real only there). So
// a maximal value that any other device reads is broadcast from its device
// first, as XLA's partitioner does (a masked all-reduce).
bool LeavesItsDevice(const Sharding& from, const Sharding& to) {
  return from.IsMaximal() && !(to.IsMaximal() && to.maximal_device() == from.maximal_device());
}

// The value of maximal `from`'s device on every device: kept there, fillers
// elsewhere, combined by an all-reduce over all devices (ExactCombine); a
// type with no exact combine is all-gathered as one slab per device and the
// owner's slab taken.
//   f32[4] {maximal device=1} -> {replicated}:
//     all-reduce(select(partition-id == 1, x, -inf)), to_apply=max
Instruction* BroadcastFromDevice(LocalBuilder& b, Instruction* local, const Sharding& from) {
  const int64_t owner = from.maximal_device();
  std::vector<int64_t> all(static_cast<size_t>(b.num_devices()));
  std::iota(all.begin(), all.end(), 0);
  const hlo::PrimitiveType type = local->shape().type();
  if (std::optional<Combine> combine = ExactCombine(type)) {
    std::vector<int64_t> is_owner(all.size(), 0);
    is_owner[static_cast<size_t>(owner)] = 1;
    return b.AllReduce(b.KeepOnly(local, is_owner, b.ScalarConstant(type, combine->filler)),
                       b.Reducer(combine->op, type),
                       {all});
  }
  std::vector<int64_t> slab = local->shape().dims();
  slab.insert(slab.begin(), 1);
  Instruction* gathered = b.AllGather(b.Reshape(local, slab), 0, {all});
  std::vector<Instruction*> starts(slab.size(), nullptr);
  for (size_t d = 0; d < slab.size(); ++d) starts[d] = b.ConstantS32(d == 0 ? owner : 0);
  return b.Reshape(b.DynamicSlice(gathered, starts, slab), local->shape().dims());
}

// Makes `dims` whole inside their device groups (XLA's ReplicatePartial):
//   - a dim every tile holds whole (size 1 split n ways: only the first tile
//     has data) comes from its first tile by a masked all-reduce;
//   - a dim at most half as long as its tile count is placed into fillers at
//     each tile's offset and all-reduced (ExactCombine says how);
//   - any other is all-gathered, minor dims first, one all-gather each.
// Padding is sliced off; the dims end up whole.
Instruction* GatherDims(LocalBuilder& b, Instruction* local, const Shape& global,
                        const Sharding& from, std::vector<int64_t> dims) {
  std::vector<int64_t> from_first, placed, gathered;
  const hlo::PrimitiveType type = local->shape().type();
  const std::optional<Combine> combine = ExactCombine(type);
  for (int64_t d : dims) {
    const int64_t parts = from.TileCount(d);
    if (parts == 1) continue;
    if (!combine) {
      gathered.push_back(d);
    } else if (local->shape().dim(d) == global.dim(d)) {
      from_first.push_back(d);
    } else if (global.dim(d) <= parts / 2) {
      placed.push_back(d);
    } else {
      gathered.push_back(d);
    }
  }
  Sharding current = from;
  if (!from_first.empty()) {
    std::vector<int64_t> first(static_cast<size_t>(b.num_devices()), 0);
    for (int64_t p = 0; p < b.num_devices(); ++p) {
      std::optional<std::vector<int64_t>> index = from.TileIndexForDevice(p);
      bool is_first = index.has_value();
      for (int64_t d : from_first) is_first = is_first && (*index)[d] == 0;
      first[p] = is_first ? 1 : 0;
    }
    local = b.AllReduce(b.KeepOnly(local, first, b.ScalarConstant(type, combine->filler)),
                        b.Reducer(combine->op, type),
                        GroupsAlongDims(current, from_first));
    current = ReplicateDims(current, from_first);
  }
  // Minor dims first, as XLA does.
  std::sort(gathered.rbegin(), gathered.rend());
  for (int64_t d : gathered) {
    Instruction* all = b.AllGather(local, d, GroupsAlongDims(current, {d}));
    std::vector<int64_t> limits = all->shape().dims();
    limits[d] = global.dim(d);
    local = b.Slice(all, limits);
    current = ReplicateDims(current, {d});
  }
  if (!placed.empty()) {
    // Fillers as long as every tile (padding included), so each tile's
    // update fits at its offset; the padding is sliced off after the sum.
    Shape padded = local->shape();
    std::vector<int64_t> limits = local->shape().dims();
    std::vector<Instruction*> starts;
    for (int64_t d = 0; d < global.rank(); ++d) {
      const bool is_placed = std::find(placed.begin(), placed.end(), d) != placed.end();
      if (is_placed) {
        padded = Shape(padded.type(), [&] {
          std::vector<int64_t> v = padded.dims();
          v[d] = local->shape().dim(d) * current.TileCount(d);
          return v;
        }());
        limits[d] = global.dim(d);
      }
      starts.push_back(is_placed ? b.PerDeviceValue(TileOffsets(current, global, d, b.num_devices()), "offset")
                                 : b.ConstantS32(0));
    }
    Instruction* fillers = b.Broadcast(b.ScalarConstant(type, combine->filler), padded, {});
    std::vector<Instruction*> operands = {fillers, local};
    operands.insert(operands.end(), starts.begin(), starts.end());
    Instruction* update = b.Add(Instruction::Create(hlo::Opcode::kDynamicUpdateSlice,
                                                    b.FreshName("placed"), padded, operands));
    local = b.Slice(b.AllReduce(update, b.Reducer(combine->op, type), GroupsAlongDims(current, placed)),
                    limits);
  }
  return local;
}

bool CanCollectivePermute(const Sharding& from, const Sharding& to) {
  return from.tile_assignment().dims() == to.tile_assignment().dims() &&
         from.subgroup_types() == to.subgroup_types();
}

Instruction* CollectivePermute(LocalBuilder& b, Instruction* local, const Sharding& from,
                               const Sharding& to) {
  const auto& src = from.tile_assignment().devices();
  const auto& dst = to.tile_assignment().devices();
  if (src == dst) return local;
  std::vector<std::vector<int64_t>> pairs;
  for (size_t i = 0; i < src.size(); ++i) pairs.push_back({src[i], dst[i]});
  std::sort(pairs.begin(), pairs.end());
  return b.CollectivePermute(local, pairs);
}

// Each device's tile under `to` lies inside its tile under `from`: slice it
// out locally.
Instruction* LocalSlice(LocalBuilder& b, Instruction* local, const Shape& global,
                        const Sharding& from, const Sharding& to) {
  Shape to_shard = to.ShardShape(global);
  std::vector<int64_t> high(static_cast<size_t>(global.rank()), 0);
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < global.rank(); ++d) {
    std::vector<int64_t> table(static_cast<size_t>(b.num_devices()), 0);
    for (int64_t p = 0; p < b.num_devices(); ++p) {
      table[p] = to.TileOffset(global, p)[d] - from.TileOffset(global, p)[d];
    }
    // Padding positions may lie past the old tile: pad so the slice never
    // runs off the buffer (dynamic-slice would clamp and shift the data).
    int64_t furthest = 0;
    for (int64_t v : table) furthest = std::max(furthest, v + to_shard.dim(d));
    high[d] = std::max<int64_t>(0, furthest - local->shape().dim(d));
    starts.push_back(b.PerDeviceValue(table, "offset"));
  }
  Instruction* padded = b.PadHigh(local, high);
  return b.DynamicSlice(padded, starts, to_shard.dims());
}

}  // namespace

std::vector<std::vector<int64_t>> GroupsAlongDims(const Sharding& sharding,
                                                  const std::vector<int64_t>& dims) {
  const hlo::TileAssignment& t = sharding.tile_assignment();
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  std::vector<int64_t> index(static_cast<size_t>(t.num_dims()), 0);
  for (size_t k = 0; k < t.devices().size(); ++k) {
    std::vector<int64_t> key = index;
    for (int64_t d : dims) key[d] = 0;
    groups[key].push_back(t.devices()[k]);
    hlo::NextIndex(t.dims(), index);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, members] : groups) out.push_back(std::move(members));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> TileOffsets(const Sharding& sharding, const Shape& shape, int64_t dim,
                                 int64_t num_devices) {
  std::vector<int64_t> table(static_cast<size_t>(num_devices), 0);
  for (int64_t p = 0; p < num_devices; ++p) table[p] = sharding.TileOffset(shape, p)[dim];
  return table;
}

bool NeedsNoReshard(const Sharding& from, const Sharding& to) {
  if (from.IsTuple() || to.IsTuple()) return from == to;
  if (LeavesItsDevice(from, to)) return false;
  return AsDataLayout(from) == AsDataLayout(to);
}

namespace {

// Inside a partially manual region the devices of a manual group hold one
// value between them and other groups hold other values, so a reshard may
// move data only within a group: both layouts must group the devices alike
// (with their data dims replicated they agree). The data dims `to` does not
// refine are gathered within the groups, then each device slices its tile.
//   {devices=[2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
//     -> {devices=[1,4,2]<=[8] last_tile_dims={manual, replicated}}: all-gather in pairs
absl::StatusOr<std::vector<ReshardStep>> PlanReshardInManualGroups(const Shape& global,
                                                                   const Sharding& from,
                                                                   const Sharding& to) {
  std::vector<int64_t> all(static_cast<size_t>(global.rank()));
  std::iota(all.begin(), all.end(), 0);
  const Sharding groups = ReplicateDims(from, all);
  if (groups != ReplicateDims(to, all)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot reshard between ", from.ToString(), " and ", to.ToString(),
                     ": a partially manual value moves only within its manual groups, and these "
                     "group the devices differently"));
  }
  std::vector<ReshardStep> steps;
  Sharding at = from;
  if (!IsSubTilingOrEqual(global, to, from)) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < global.rank(); ++d) {
      if (to.TileCount(d) % from.TileCount(d) != 0) dims.push_back(d);
    }
    at = ReplicateDims(from, dims);
    if (!IsSubTilingOrEqual(global, to, at)) at = groups;
    steps.push_back({hlo::kSpmdAllGather, at});
  }
  if (at != to) steps.push_back({hlo::kSpmdAllSlice, to});
  return steps;
}

// A change involving unreduced groups (spmd/unreduced.h) goes through the
// whole value: partial values are summed first, the whole value is
// resharded, and split into partial values last.
//   {unreduced} -> {devices=[2,1]0,1}: sum partials, then slice
//   {devices=[2,1]0,1} -> {unreduced}: gather, then keep on device 0
absl::StatusOr<std::vector<ReshardStep>> PlanReshardThroughWhole(const Shape& global,
                                                                 const Sharding& from,
                                                                 const Sharding& to) {
  if (from.IsManual() || to.IsManual() || from.HasManualSubgroup() || to.HasManualSubgroup()) {
    return absl::UnimplementedError(absl::StrCat("unsupported: resharding between ",
                                                 from.ToString(), " and ", to.ToString(),
                                                 ": unreduced values in manual regions"));
  }
  std::vector<ReshardStep> steps;
  const Sharding from_whole = ReducedForm(from), to_whole = ReducedForm(to);
  if (from.HasUnreduced()) steps.push_back({hlo::kSpmdSumPartials, from_whole});
  ASSIGN_OR_RETURN(std::vector<ReshardStep> middle, PlanReshard(global, from_whole, to_whole));
  steps.insert(steps.end(), middle.begin(), middle.end());
  if (to.HasUnreduced()) steps.push_back({hlo::kSpmdSplitIntoPartials, to});
  return steps;
}

// The whole value on every device becomes partial values of `to`'s
// unreduced groups: each group's first device keeps it, the others zeros.
Instruction* SplitIntoPartials(LocalBuilder& b, Instruction* local, const Sharding& to) {
  std::vector<int64_t> holds(static_cast<size_t>(b.num_devices()));
  for (int64_t d = 0; d < b.num_devices(); ++d) holds[d] = HoldsWholeValue(to, d) ? 1 : 0;
  return b.KeepOnly(local, holds, b.ScalarConstant(local->shape().type(), 0));
}

// A partially replicated `from` that `to` refines tile by tile (each dim's
// count a multiple of `from`'s) but with other devices in the new tiles:
// the same tiling with `from`'s devices, so that each device slices its new
// tile out of its old one (XLA's PartialReplicateReshardCompatibleSharding);
// a collective-permute then puts the tiles on `to`'s devices.
//   {devices=[1,2,4]<=[8] last_tile_dim_replicate}
//     -> {devices=[2,2,2]<=[8] last_tile_dim_replicate}: slice, then collective-permute
std::optional<Sharding> RefinementOfFrom(const Shape& global, const Sharding& from,
                                         const Sharding& to) {
  if (!from.IsTiled() || !to.IsTiled() || !from.ReplicateOnLastTileDim() ||
      from.subgroup_types().size() != 1 || to.subgroup_types().size() > 1 ||
      (to.subgroup_types().size() == 1 && !to.ReplicateOnLastTileDim())) {
    return std::nullopt;
  }
  const int64_t rank = global.rank();
  std::vector<int64_t> split(static_cast<size_t>(rank));
  int64_t pieces = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (to.TileCount(d) % from.TileCount(d) != 0) return std::nullopt;
    split[d] = to.TileCount(d) / from.TileCount(d);
    pieces *= split[d];
  }
  const int64_t from_group = from.ReplicationFactor();
  if (pieces == 1 || from_group % pieces != 0 || from_group / pieces != to.ReplicationFactor()) {
    return std::nullopt;
  }
  const int64_t to_group = from_group / pieces;
  // Device of new tile (i_0..i_r-1) and replica k: `from`'s group of tile
  // (i_d / split_d), member (piece index of (i_d % split_d)) * to_group + k.
  std::vector<int64_t> dims = to.tile_assignment().dims();
  if (to.subgroup_types().empty()) dims.push_back(1);
  std::vector<int64_t> devices;
  std::vector<int64_t> index(dims.size(), 0);
  const hlo::TileAssignment& old_tiles = from.tile_assignment();
  for (int64_t n = 0, total = to.tile_assignment().num_devices(); n < total; ++n) {
    std::vector<int64_t> old_index(static_cast<size_t>(rank + 1));
    int64_t piece = 0;
    for (int64_t d = 0; d < rank; ++d) {
      old_index[d] = index[d] / split[d];
      piece = piece * split[d] + index[d] % split[d];
    }
    old_index[rank] = piece * to_group + index[rank];
    devices.push_back(old_tiles.at(old_index));
    hlo::NextIndex(dims, index);
  }
  Sharding refined = Sharding::Tiled(hlo::TileAssignment(dims, std::move(devices)),
                                     {hlo::SubgroupType::kReplicated});
  if (!IsSubTilingOrEqual(global, refined, from) || !CanCollectivePermute(refined, to)) {
    return std::nullopt;
  }
  return refined;
}

}  // namespace

absl::StatusOr<std::vector<ReshardStep>> PlanReshard(const Shape& global,
                                                     const Sharding& from_in,
                                                     const Sharding& to_in) {
  // A token carries no data: every device has its own.
  if (global.type() == hlo::PrimitiveType::kToken) return std::vector<ReshardStep>{};
  if (LeavesItsDevice(from_in, to_in)) {
    if (to_in.IsMaximal()) return std::vector<ReshardStep>{{hlo::kSpmdAllGather, to_in}};
    std::vector<ReshardStep> steps = {{hlo::kSpmdAllGather, Sharding::Replicated()}};
    ASSIGN_OR_RETURN(std::vector<ReshardStep> rest,
                     PlanReshard(global, Sharding::Replicated(), to_in));
    steps.insert(steps.end(), rest.begin(), rest.end());
    return steps;
  }
  Sharding from = AsDataLayout(from_in), to = AsDataLayout(to_in);
  std::vector<ReshardStep> steps;
  if (from == to) return steps;
  if (from.HasUnreduced() || to.HasUnreduced()) return PlanReshardThroughWhole(global, from, to);
  if (from.HasManualSubgroup() && to.HasManualSubgroup()) {
    return PlanReshardInManualGroups(global, from, to);
  }
  if (from.IsManual() || to.IsManual()) {
    if (from.IsManual() && to.IsManual()) return steps;
    return absl::InvalidArgumentError(absl::StrCat("cannot reshard between ", from.ToString(),
                                                   " and ", to.ToString(),
                                                   " outside a manual region boundary"));
  }
  std::vector<int64_t> all;
  for (int64_t d = 0; d < global.rank(); ++d) all.push_back(d);
  if (to.IsReplicated()) return std::vector<ReshardStep>{{hlo::kSpmdAllGather, to}};
  if (from.IsReplicated()) return std::vector<ReshardStep>{{hlo::kSpmdAllSlice, to}};
  if (CanCollectivePermute(from, to)) {
    return std::vector<ReshardStep>{{hlo::kSpmdCollectivePermute, to}};
  }
  if (IsSubTilingOrEqual(global, to, from)) return std::vector<ReshardStep>{{hlo::kSpmdAllSlice, to}};
  if (std::optional<Sharding> refined = RefinementOfFrom(global, from, to)) {
    return std::vector<ReshardStep>{{hlo::kSpmdAllSlice, *refined},
                                    {hlo::kSpmdCollectivePermute, to}};
  }
  if (std::optional<std::vector<ReshardStep>> all_to_all = PlanAllToAllReshard(global, from, to)) {
    return *all_to_all;
  }
  // Gather the dims whose tiling `to` does not refine, then slice locally
  // (or permute) to reach `to`.
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < global.rank(); ++d) {
    if (to.TileCount(d) % from.TileCount(d) != 0) dims.push_back(d);
  }
  if (!dims.empty()) {
    Sharding partial = ReplicateDims(from, dims);
    steps.push_back({hlo::kSpmdAllGather, partial});
    if (partial == to) return steps;
    if (CanCollectivePermute(partial, to)) {
      steps.push_back({hlo::kSpmdCollectivePermute, to});
      return steps;
    }
    if (IsSubTilingOrEqual(global, to, partial)) {
      steps.push_back({hlo::kSpmdAllSlice, to});
      return steps;
    }
    from = partial;
  }
  // Whatever is left: through the whole value.
  steps.push_back({hlo::kSpmdAllGather, Sharding::Replicated()});
  steps.push_back({hlo::kSpmdAllSlice, to});
  return steps;
}

absl::StatusOr<Instruction*> LowerReshardStep(LocalBuilder& b, Instruction* local,
                                              const Shape& global, const Sharding& from_in,
                                              const ReshardStep& step) {
  const Sharding from = AsDataLayout(from_in), to = AsDataLayout(step.after);
  if (step.target == hlo::kSpmdAllGather && LeavesItsDevice(from_in, step.after)) {
    return BroadcastFromDevice(b, local, from_in);
  }
  if (step.target == hlo::kSpmdAllGather) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < global.rank(); ++d) {
      if (from.TileCount(d) != to.TileCount(d)) dims.push_back(d);
    }
    return GatherDims(b, local, global, from, dims);
  }
  if (step.target == hlo::kSpmdAllSlice) {
    if (from.IsReplicated()) return SliceToTiled(b, local, global, to);
    return LocalSlice(b, local, global, from, to);
  }
  if (step.target == hlo::kSpmdCollectivePermute) {
    if (!CanCollectivePermute(from, to)) {
      return absl::InvalidArgumentError(absl::StrCat("collective-permute cannot take ",
                                                     from.ToString(), " to ", to.ToString()));
    }
    return CollectivePermute(b, local, from, to);
  }
  if (step.target == hlo::kSpmdAllToAll) return LowerAllToAllStep(b, local, global, from, to);
  if (step.target == hlo::kSpmdSumPartials) {
    const hlo::PrimitiveType type = local->shape().type();
    return b.AllReduce(local,
                       b.Reducer(type == hlo::PrimitiveType::kPred ? hlo::Opcode::kOr
                                                                   : hlo::Opcode::kAdd,
                                 type),
                       UnreducedGroups(from_in, b.num_devices()));
  }
  if (step.target == hlo::kSpmdSplitIntoPartials) return SplitIntoPartials(b, local, step.after);
  return absl::InvalidArgumentError(absl::StrCat("not a reshard step: ", std::string(step.target)));
}

}  // namespace sharc::spmd
