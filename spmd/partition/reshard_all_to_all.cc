#include "spmd/partition/reshard_all_to_all.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "hlo/ops/spmd_global_view.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Shape;
using hlo::Sharding;
using hlo::TileAssignment;

namespace {

using DimPairs = std::vector<std::pair<int64_t, int64_t>>;  // (source dim, target dim)

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Both tiled, over the same subgroup dims, with as many tiles.
bool Comparable(const Sharding& from, const Sharding& to) {
  if (!from.IsTiled() || !to.IsTiled() || from.subgroup_types() != to.subgroup_types() ||
      from.TiledDataRank() != to.TiledDataRank() || from.NumTiles() != to.NumTiles()) {
    return false;
  }
  const auto& fd = from.tile_assignment().dims();
  const auto& td = to.tile_assignment().dims();
  return std::equal(fd.begin() + from.TiledDataRank(), fd.end(), td.begin() + to.TiledDataRank(),
                    td.end());
}

// XLA's GetReshardAllToAllSourceTargetDims: pairs dims whose tile counts
// differ so that swapping counts along the pairs, one at a time, turns the
// source's counts into the target's.
std::optional<DimPairs> SourceTargetDims(const Sharding& from, const Sharding& to) {
  if (!Comparable(from, to)) return std::nullopt;
  std::map<int64_t, std::vector<int64_t>> source_size_to_dim, target_size_to_dim;
  for (int64_t d = 0; d < from.TiledDataRank(); ++d) {
    if (from.TileCount(d) == to.TileCount(d)) continue;
    source_size_to_dim[from.TileCount(d)].push_back(d);
    target_size_to_dim[to.TileCount(d)].push_back(d);
  }
  if (source_size_to_dim.empty() || source_size_to_dim.size() != target_size_to_dim.size()) {
    return std::nullopt;
  }
  for (const auto& [size, dims] : source_size_to_dim) {
    auto it = target_size_to_dim.find(size);
    if (it == target_size_to_dim.end() || it->second.size() != dims.size()) return std::nullopt;
  }
  auto remove = [](int64_t size, int64_t dim, std::map<int64_t, std::vector<int64_t>>& m) {
    std::vector<int64_t>& dims = m[size];
    dims.erase(std::find(dims.begin(), dims.end(), dim));
    if (dims.empty()) m.erase(size);
  };
  DimPairs pairs;
  while (!source_size_to_dim.empty()) {
    const int64_t source_size = source_size_to_dim.begin()->first;
    const int64_t i = source_size_to_dim.begin()->second.back();
    const int64_t target_i_size = to.TileCount(i);
    if (target_i_size == source_size) {
      remove(source_size, i, source_size_to_dim);
      remove(source_size, i, target_size_to_dim);
      continue;
    }
    auto candidates = source_size_to_dim.find(target_i_size);
    if (candidates == source_size_to_dim.end()) return std::nullopt;
    auto j_it = candidates->second.begin();
    int64_t j = *j_it;
    if (source_size == 1) {
      // Prefer a j whose target count is not 1, so the swap stays useful.
      while (to.TileCount(j) == 1 && std::next(j_it) != candidates->second.end()) j = *++j_it;
    } else if (target_i_size % source_size == 0) {
      // Prefer a j whose target count is source_size: one swap finishes both.
      while (to.TileCount(j) != source_size && std::next(j_it) != candidates->second.end()) {
        j = *++j_it;
      }
    } else {
      return std::nullopt;
    }
    pairs.emplace_back(j, i);
    remove(target_i_size, i, target_size_to_dim);
    source_size_to_dim.begin()->second.back() = j;
    remove(target_i_size, j, source_size_to_dim);
  }
  return pairs;
}

// For each pair (s, t) with g: the minor g part of source dim s's tiles
// becomes the minor part of target dim t's (s keeps S/g tiles, t gets T*g).
// XLA's GetAllToAllSharding is the swap g = S/T (s ends with T tiles, t with S).
std::optional<Sharding> MovedSharding(const Sharding& from, const DimPairs& pairs,
                                      const std::vector<int64_t>& g) {
  Sharding moved = from;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [s, t] = pairs[k];
    if (s == t || g[k] <= 0 || moved.TileCount(s) % g[k] != 0) return std::nullopt;
    moved = MoveTiles(moved, s, t, g[k]);
  }
  TileAssignment tiles = moved.tile_assignment();
  tiles.ForgetIotaForm();
  return Sharding::Tiled(tiles, moved.subgroup_types());
}

// The g of each pair of XLA's swap (S/T), if every S divides by its T.
std::optional<std::vector<int64_t>> SwapGroups(const Sharding& from, const DimPairs& pairs) {
  std::vector<int64_t> g;
  for (const auto& [s, t] : pairs) {
    const int64_t S = from.TileCount(s), T = from.TileCount(t);
    if (T == 0 || S % T != 0) return std::nullopt;
    g.push_back(S / T);
  }
  return g;
}

std::optional<Sharding> AllToAllSharding(const Sharding& from, const DimPairs& pairs) {
  std::optional<std::vector<int64_t>> g = SwapGroups(from, pairs);
  if (!g) return std::nullopt;
  return MovedSharding(from, pairs, *g);
}

// Whether the lowering below lays the data out exactly: a dim split unevenly
// only where the target dim of its pair is whole before (T == 1).
bool Lowerable(const Shape& global, const Sharding& from, const DimPairs& pairs,
               const std::vector<int64_t>& g) {
  std::set<int64_t> seen;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [s, t] = pairs[k];
    if (!seen.insert(s).second || !seen.insert(t).second) return false;
    const int64_t S = from.TileCount(s), T = from.TileCount(t);
    if (g[k] <= 0 || S % g[k] != 0) return false;
    if (T > 1 && (global.dim(s) % S != 0 || global.dim(t) % (T * g[k]) != 0)) return false;
  }
  return true;
}

bool Lowerable(const Shape& global, const Sharding& from, const DimPairs& pairs) {
  std::optional<std::vector<int64_t>> g = SwapGroups(from, pairs);
  return g && Lowerable(global, from, pairs, *g);
}

// One dim s whose tile count falls by g and one dim t whose count rises by
// g, every other dim alike: the minor g part of s's tiles moves to t in one
// all-to-all (XLA reaches these through reshapes, TryComplexReshardHandling).
//   f32[8,32] {devices=[8,1]<=[8]} -> {devices=[2,4]<=[8]}: s 0, t 1, g 4
//   f32[7,1024,1024] {devices=[1,2,4]<=[8]} -> {devices=[1,8,1]<=[8]}: s 2, t 1, g 4
std::optional<std::vector<ReshardStep>> PlanOneMove(const Shape& global, const Sharding& from,
                                                    const Sharding& to) {
  if (!Comparable(from, to)) return std::nullopt;
  std::vector<int64_t> fell, rose;
  for (int64_t d = 0; d < from.TiledDataRank(); ++d) {
    if (from.TileCount(d) > to.TileCount(d)) fell.push_back(d);
    if (from.TileCount(d) < to.TileCount(d)) rose.push_back(d);
  }
  if (fell.size() != 1 || rose.size() != 1) return std::nullopt;
  const int64_t s = fell[0], t = rose[0];
  if (to.TileCount(s) == 0 || from.TileCount(s) % to.TileCount(s) != 0) return std::nullopt;
  const std::vector<int64_t> g = {from.TileCount(s) / to.TileCount(s)};
  if (to.TileCount(t) != from.TileCount(t) * g[0]) return std::nullopt;
  // Even dims only: XLA gathers an uneven one (NoComplexReshardSplitToLeft).
  if (global.dim(s) % from.TileCount(s) != 0 || global.dim(t) % to.TileCount(t) != 0) {
    return std::nullopt;
  }
  const DimPairs pairs = {{s, t}};
  if (!Lowerable(global, from, pairs, g)) return std::nullopt;
  std::optional<Sharding> after = MovedSharding(from, pairs, g);
  if (!after) return std::nullopt;
  std::vector<ReshardStep> steps = {{hlo::kSpmdAllToAll, *after}};
  if (*after != to) steps.push_back({hlo::kSpmdCollectivePermute, to});
  return steps;
}

// XLA's TryMultipleSourceTargetDims / ReshardWithAllToAll recursion, on
// shardings alone: appends the steps and returns the sharding they reach.
std::optional<Sharding> Plan(const Shape& global, Sharding current, const Sharding& to,
                             DimPairs pairs, bool try_multiple, std::vector<ReshardStep>& steps) {
  while (!pairs.empty()) {
    if (try_multiple) {
      DimPairs by_target = pairs;
      std::stable_sort(by_target.begin(), by_target.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
      DimPairs eligible, ineligible;
      std::set<int64_t> seen;
      for (const auto& [s, t] : by_target) {
        const bool fresh = !seen.count(s) && !seen.count(t);
        if (fresh && global.dim(s) % current.TileCount(s) == 0 &&
            global.dim(t) % to.TileCount(t) == 0) {
          eligible.emplace_back(s, t);
          seen.insert(s);
          seen.insert(t);
        } else {
          ineligible.emplace_back(s, t);
        }
      }
      if (eligible.size() >= 2) {
        if (!Lowerable(global, current, eligible)) return std::nullopt;
        std::optional<Sharding> after = AllToAllSharding(current, eligible);
        if (!after) return std::nullopt;
        steps.push_back({hlo::kSpmdAllToAll, *after});
        current = *after;
        pairs = ineligible;
        try_multiple = false;
        continue;
      }
    }
    const DimPairs first = {pairs.front()};
    if (!Lowerable(global, current, first)) return std::nullopt;
    std::optional<Sharding> after = AllToAllSharding(current, first);
    if (!after) return std::nullopt;
    steps.push_back({hlo::kSpmdAllToAll, *after});
    current = *after;
    pairs.erase(pairs.begin());
    try_multiple = true;
  }
  return current;
}

// The g of each pair of a step from `from` to `after`: how many times fewer
// tiles its source dim has after (0 where that does not divide).
std::vector<int64_t> StepGroups(const Sharding& from, const Sharding& after, const DimPairs& pairs) {
  std::vector<int64_t> g;
  for (const auto& [s, t] : pairs) {
    const int64_t before = from.TileCount(s), left = after.TileCount(s);
    g.push_back(left > 0 && before % left == 0 ? before / left : 0);
  }
  return g;
}

// The pairs an all-to-all step from `from` to `after` swaps: the dims whose
// counts fell (sources) and rose (targets), matched so that the swap gives
// exactly `after`.
std::optional<DimPairs> StepPairs(const Sharding& from, const Sharding& after) {
  if (!Comparable(from, after)) return std::nullopt;
  std::vector<int64_t> sources, targets;
  for (int64_t d = 0; d < from.TiledDataRank(); ++d) {
    if (from.TileCount(d) > after.TileCount(d)) sources.push_back(d);
    if (from.TileCount(d) < after.TileCount(d)) targets.push_back(d);
  }
  if (sources.empty() || sources.size() != targets.size() || sources.size() > 6) return std::nullopt;
  do {
    DimPairs pairs;
    for (size_t k = 0; k < sources.size(); ++k) pairs.emplace_back(sources[k], targets[k]);
    std::optional<Sharding> reached = MovedSharding(from, pairs, StepGroups(from, after, pairs));
    if (reached && *reached == after) return pairs;
  } while (std::next_permutation(targets.begin(), targets.end()));
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<ReshardStep>> PlanAllToAllReshard(const Shape& global,
                                                            const Sharding& from,
                                                            const Sharding& to) {
  std::optional<DimPairs> pairs = SourceTargetDims(from, to);
  if (!pairs) return PlanOneMove(global, from, to);
  std::vector<ReshardStep> steps;
  std::optional<Sharding> reached = Plan(global, from, to, *pairs, true, steps);
  if (!reached) return std::nullopt;
  if (*reached != to) {
    if (reached->tile_assignment().dims() != to.tile_assignment().dims()) return std::nullopt;
    steps.push_back({hlo::kSpmdCollectivePermute, to});
  }
  return steps;
}

absl::StatusOr<Instruction*> LowerAllToAllStep(LocalBuilder& b, Instruction* local,
                                               const Shape& global, const Sharding& from,
                                               const Sharding& after) {
  std::optional<DimPairs> found = StepPairs(from, after);
  if (!found || !Lowerable(global, from, *found, StepGroups(from, after, *found))) {
    return absl::InvalidArgumentError(
        absl::StrCat("all-to-all cannot take ", from.ToString(), " to ", after.ToString()));
  }
  DimPairs pairs = *found;
  // Target dims in increasing order: the order of the chunk axes and of
  // each group's members.
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& a, const auto& c) { return a.second < c.second; });
  const int64_t rank = global.rank();
  std::map<int64_t, int64_t> group_of_target, group_of_source;  // dim -> g
  for (const auto& [s, t] : pairs) {
    const int64_t g = from.TileCount(s) / after.TileCount(s);
    group_of_target[t] = g;
    group_of_source[s] = g;
  }

  // Each target dim padded to g whole chunks, split as [g, chunk].
  std::vector<int64_t> dims = local->shape().dims();
  std::vector<int64_t> high(static_cast<size_t>(rank), 0);
  for (const auto& [t, g] : group_of_target) {
    const int64_t chunk = CeilDiv(dims[static_cast<size_t>(t)], g);
    high[static_cast<size_t>(t)] = chunk * g - dims[static_cast<size_t>(t)];
    dims[static_cast<size_t>(t)] = chunk * g;
  }
  Instruction* x = b.PadHigh(local, high);
  std::vector<int64_t> split, chunk_axes, rest_axes;
  for (int64_t d = 0; d < rank; ++d) {
    auto it = group_of_target.find(d);
    if (it != group_of_target.end()) {
      chunk_axes.push_back(static_cast<int64_t>(split.size()));
      split.push_back(it->second);
      split.push_back(dims[static_cast<size_t>(d)] / it->second);
      rest_axes.push_back(static_cast<int64_t>(split.size()) - 1);
    } else {
      rest_axes.push_back(static_cast<int64_t>(split.size()));
      split.push_back(dims[static_cast<size_t>(d)]);
    }
  }
  x = b.Reshape(x, split);
  // Chunk axes to the front, merged into one, exchanged.
  std::vector<int64_t> front = chunk_axes;
  front.insert(front.end(), rest_axes.begin(), rest_axes.end());
  x = b.Transpose(x, front);
  int64_t chunks = 1;
  for (const auto& [t, g] : group_of_target) chunks *= g;
  std::vector<int64_t> merged = {chunks};
  for (int64_t axis : rest_axes) merged.push_back(split[static_cast<size_t>(axis)]);
  x = b.Reshape(x, merged);

  // Groups: devices of `after` that differ only in the minor g part of the
  // target dims, ordered by those parts (row-major in dim order).
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int64_t>>> members;
  const TileAssignment& tiles = after.tile_assignment();
  std::vector<int64_t> index(static_cast<size_t>(tiles.num_dims()), 0);
  for (int64_t device : tiles.devices()) {
    std::vector<int64_t> key = index;
    int64_t position = 0;
    for (const auto& [t, g] : group_of_target) {
      key[static_cast<size_t>(t)] = index[static_cast<size_t>(t)] / g;
      position = position * g + index[static_cast<size_t>(t)] % g;
    }
    members[key].emplace_back(position, device);
    hlo::NextIndex(tiles.dims(), index);
  }
  std::vector<std::vector<int64_t>> groups;
  for (auto& [key, list] : members) {
    std::sort(list.begin(), list.end());
    std::vector<int64_t> group;
    for (const auto& [position, device] : list) group.push_back(device);
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end());
  x = b.AllToAll(x, 0, groups);

  // The received chunks (sender's position along each pair) go in front of
  // each pair's source dim and merge with it.
  std::vector<int64_t> unmerged;
  for (const auto& [t, g] : group_of_target) unmerged.push_back(g);
  const int64_t n = static_cast<int64_t>(unmerged.size());
  for (size_t i = 1; i < merged.size(); ++i) unmerged.push_back(merged[i]);
  x = b.Reshape(x, unmerged);
  // Chunk axis k (k-th target in increasing order) belongs to the pair
  // whose target that is; rest axis d sits at n + d.
  std::map<int64_t, int64_t> chunk_axis_of_source;
  int64_t k = 0;
  for (const auto& [t, g] : group_of_target) {
    for (const auto& [s, tt] : pairs) {
      if (tt == t) chunk_axis_of_source[s] = k;
    }
    ++k;
  }
  std::vector<int64_t> perm;
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    auto it = chunk_axis_of_source.find(d);
    const int64_t extent = merged[static_cast<size_t>(d + 1)];
    if (it != chunk_axis_of_source.end()) {
      perm.push_back(it->second);
      out_dims.push_back(unmerged[static_cast<size_t>(it->second)] * extent);
    } else {
      out_dims.push_back(extent);
    }
    perm.push_back(n + d);
  }
  x = b.Transpose(x, perm);
  x = b.Reshape(x, out_dims);
  // A source dim split unevenly gathers more than its new tile holds.
  const std::vector<int64_t> want = after.ShardShape(global).dims();
  if (x->shape().dims() != want) {
    for (int64_t d = 0; d < rank; ++d) {
      if (out_dims[static_cast<size_t>(d)] < want[static_cast<size_t>(d)]) {
        return absl::InternalError(absl::StrCat("all-to-all from ", from.ToString(), " to ",
                                                after.ToString(), " left dim ", d, " short"));
      }
    }
    x = b.Slice(x, want);
  }
  return x;
}

}  // namespace sharc::spmd
