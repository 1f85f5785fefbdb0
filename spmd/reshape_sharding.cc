#include "spmd/reshape_sharding.h"

#include <numeric>

#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Sharding;
using hlo::SubgroupType;
using hlo::TileAssignment;

std::optional<Sharding> ReshapeSharding(const hlo::Shape& source, const hlo::Shape& target,
                                        const Sharding& sharding) {
  if (sharding.IsTileMaximal() || sharding.IsManual()) return sharding;
  if (!sharding.IsTiled()) return std::nullopt;
  // Stacks popped from the back, so push minor dims first (major on top).
  // src_index remembers which source dim an entry is (-1 once folded).
  std::vector<int64_t> src_sizes, src_tiles, src_index, tgt_sizes;
  for (int64_t d = source.rank() - 1; d >= 0; --d) {
    src_sizes.push_back(source.dim(d));
    src_tiles.push_back(sharding.TileCount(d));
    src_index.push_back(d);
  }
  for (int64_t d = target.rank() - 1; d >= 0; --d) tgt_sizes.push_back(target.dim(d));

  std::vector<int64_t> out_tiles;
  bool in_place = false;  // the next emitted factor multiplies into the last dim
  std::vector<int64_t> replicate_source_dims;  // size-1 source dims that were tiled
  auto emit = [&](int64_t t) {
    if (in_place && !out_tiles.empty()) {
      out_tiles.back() *= t;
      in_place = false;
    } else {
      out_tiles.push_back(t);
    }
  };
  auto remaining_tiles = [&] {
    int64_t p = 1;
    for (int64_t t : src_tiles) p *= t;
    return p;
  };
  while (!src_sizes.empty() && !tgt_sizes.empty() && remaining_tiles() > 1) {
    // (a) Fold the leading untiled source dims into one size.
    int64_t untiled = 1;
    while (!src_sizes.empty() && src_tiles.back() == 1) {
      untiled *= src_sizes.back();
      src_sizes.pop_back();
      src_tiles.pop_back();
      src_index.pop_back();
    }
    // (b) Target dims covered by that untiled block get no tiles.
    while (!tgt_sizes.empty() && tgt_sizes.back() > 1 && untiled % tgt_sizes.back() == 0) {
      untiled /= tgt_sizes.back();
      tgt_sizes.pop_back();
      emit(1);
    }
    // (c) Put the rest back.
    if (untiled > 1) {
      src_sizes.push_back(untiled);
      src_tiles.push_back(1);
      src_index.push_back(-1);
    }
    if (src_sizes.empty() || tgt_sizes.empty()) break;
    // (d) Match the next source and target dims.
    int64_t s = src_sizes.back(), n = src_tiles.back(), t = tgt_sizes.back();
    int64_t index = src_index.back();
    src_sizes.pop_back();
    src_tiles.pop_back();
    src_index.pop_back();
    tgt_sizes.pop_back();
    auto push_source = [&](int64_t size, int64_t tiles_left, int64_t idx) {
      src_sizes.push_back(size);
      src_tiles.push_back(tiles_left);
      src_index.push_back(idx);
    };
    if (s == t) {
      emit(n);
    } else if (t == 1) {
      emit(1);
      push_source(s, n, index);
    } else if (s == 1) {
      tgt_sizes.push_back(t);
      if (n > 1 && index >= 0) replicate_source_dims.push_back(index);
    } else if (n == 1) {
      if (!src_sizes.empty() && src_tiles.back() == 1) {
        src_sizes.back() *= s;
        tgt_sizes.push_back(t);
      } else {
        break;
      }
    } else if (s % n != 0) {
      return std::nullopt;
    } else {
      int64_t g = std::gcd(n, t);
      if (g == 1) break;
      push_source(s / g, n / g, index);
      tgt_sizes.push_back(t / g);
      emit(g);
      in_place = true;
    }
  }
  int64_t product = 1;
  for (int64_t t : out_tiles) product *= t;
  if (product == 1) return std::nullopt;
  while (static_cast<int64_t>(out_tiles.size()) < target.rank()) out_tiles.push_back(1);
  if (static_cast<int64_t>(out_tiles.size()) > target.rank()) return std::nullopt;

  // The devices keep their order: the tile array is reshaped as it is,
  // folding what is left over into replication. Tiled size-1 source dims
  // carried no data; like XLA, their tiles simply become part of the
  // replication without moving devices (replicate_source_dims is recorded
  // for that reason only).
  const Sharding& base = sharding;
  const TileAssignment& tiles = base.tile_assignment();
  std::vector<int64_t> dims = out_tiles;
  int64_t manual = 1;
  std::vector<SubgroupType> subgroups;
  for (size_t i = 0; i < base.subgroup_types().size(); ++i) {
    if (base.subgroup_types()[i] == SubgroupType::kManual) {
      manual *= tiles.dim(base.TiledDataRank() + static_cast<int64_t>(i));
    }
  }
  int64_t total = tiles.num_devices();
  int64_t replicated = total / (product * manual);
  if (manual > 1) {
    // Manual subgroups sit between data and replication; keep that order by
    // requiring the data product to be laid out first.
    dims.push_back(manual);
    subgroups.push_back(SubgroupType::kManual);
  }
  if (replicated > 1) {
    dims.push_back(replicated);
    subgroups.push_back(SubgroupType::kReplicated);
  }
  return Sharding::Tiled(tiles.Reshaped(dims), subgroups);
}

Sharding PropagateThroughReshape(const hlo::Shape& source, const hlo::Shape& target,
                                 const Sharding& sharding) {
  if (sharding.IsTileMaximal() || sharding.IsManual() || !sharding.IsTiled()) return sharding;
  if (sharding.HasManualSubgroup()) {
    std::optional<Sharding> direct = ReshapeSharding(source, target, sharding);
    if (direct) return *direct;
    // The data dims cannot follow, but the value stays one per manual group:
    // its subgroups over the target's rank, every data dim whole.
    std::vector<int64_t> all(static_cast<size_t>(source.rank()));
    for (int64_t d = 0; d < source.rank(); ++d) all[static_cast<size_t>(d)] = d;
    const Sharding whole = ReplicateDims(sharding, all);
    if (!whole.IsTiled()) return whole;
    std::vector<int64_t> dims(static_cast<size_t>(target.rank()), 1);
    const auto& tiles = whole.tile_assignment().dims();
    dims.insert(dims.end(), tiles.begin() + whole.TiledDataRank(), tiles.end());
    return Sharding::Tiled(whole.tile_assignment().Reshaped(dims), whole.subgroup_types());
  }
  // Try the longest run of source dims [start, end) that reshapes, merge what
  // each run gives, and move on.
  Sharding result = Sharding::Replicated();
  const int64_t rank = source.rank();
  int64_t start = 0;
  while (start < rank) {
    bool found = false;
    for (int64_t end = rank; end > start; --end) {
      // The sharding restricted to dims [start, end): others replicated.
      std::vector<int64_t> others;
      for (int64_t d = 0; d < rank; ++d)
        if (d < start || d >= end) others.push_back(d);
      Sharding part = ReplicateDims(sharding, others);
      if (!part.IsTiled()) continue;
      std::optional<Sharding> reshaped = ReshapeSharding(source, target, part);
      if (!reshaped || !reshaped->IsTiled()) continue;
      if (result.IsReplicated()) {
        result = *reshaped;
        found = true;
      } else if (std::optional<Sharding> merged = MergeCompatible(result, *reshaped)) {
        result = *merged;
        found = true;
      }
      if (found) {
        start = end;
        break;
      }
    }
    if (!found) ++start;
  }
  return result;
}

}  // namespace sharc::spmd
