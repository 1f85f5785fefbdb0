#include "spmd/sharding_projection.h"

#include <numeric>

namespace sharc::spmd {

using hlo::Sharding;
using hlo::SubgroupType;
using hlo::TileAssignment;

namespace {

// One axis of the tile array after splitting each data dim into the parts
// that belong to its factors.
struct Axis {
  enum class Kind { kFactor, kReplicated, kManual };
  Kind kind;
  int64_t size;
  int64_t factor = -1;
};

// Splits data dim `d` (tile count `tiles`) over its factors, major to minor.
// A factor takes as much of the split as its size allows; once a factor is
// only partly split, more minor factors cannot be split (their tiles would
// not be contiguous), and what is left becomes replication.
void SplitDim(int64_t tiles, const std::vector<int64_t>& factors, const ShardingRule& rule,
              std::vector<Axis>& axes) {
  auto replicate = [&](int64_t size) {
    if (size > 1) axes.push_back({Axis::Kind::kReplicated, size});
  };
  if (factors.size() == 1) {
    // A single factor keeps the whole split, divisible or not (uneven
    // shardings pass through pointwise ops unchanged).
    const Factor& f = rule.factors[static_cast<size_t>(factors[0])];
    if (f.kind == FactorKind::kNeedReplication) {
      replicate(tiles);
    } else {
      axes.push_back({Axis::Kind::kFactor, tiles, factors[0]});
    }
    return;
  }
  int64_t remaining = tiles;
  for (int64_t id : factors) {
    if (remaining == 1) break;
    const Factor& f = rule.factors[static_cast<size_t>(id)];
    if (f.kind == FactorKind::kNeedReplication) break;
    int64_t g = std::gcd(f.size, remaining);
    if (g == 1) break;
    axes.push_back({Axis::Kind::kFactor, g, id});
    remaining /= g;
    if (g < f.size) break;
  }
  replicate(remaining);
}

}  // namespace

std::optional<Sharding> ProjectSharding(const Sharding& from_sharding, const DimFactors& from,
                                        const DimFactors& to, const ShardingRule& rule) {
  if (from_sharding.IsReplicated() || from_sharding.IsManual()) return from_sharding;
  if (!from_sharding.IsTiled()) return std::nullopt;
  const int64_t from_rank = from_sharding.TiledDataRank();
  if (from_rank != static_cast<int64_t>(from.size())) return std::nullopt;
  // Same factors in the same dims (pointwise ops, pass-through dims of
  // slices and pads): the sharding carries over unchanged, unless a
  // need-replication factor is split.
  if (from == to) {
    bool identity = true;
    for (int64_t d = 0; d < from_rank && identity; ++d) {
      const std::vector<int64_t>& f = from[static_cast<size_t>(d)];
      if (from_sharding.TileCount(d) == 1) continue;
      identity = f.size() == 1 &&
                 rule.factors[static_cast<size_t>(f[0])].kind != FactorKind::kNeedReplication;
    }
    if (identity) return from_sharding;
  }

  // 1. The from array as axes.
  std::vector<Axis> axes;
  std::vector<int64_t> axis_dims;
  for (int64_t d = 0; d < from_rank; ++d) {
    SplitDim(from_sharding.TileCount(d), from[static_cast<size_t>(d)], rule, axes);
  }
  const auto& tiles = from_sharding.tile_assignment();
  for (size_t i = 0; i < from_sharding.subgroup_types().size(); ++i) {
    int64_t size = tiles.dim(from_rank + static_cast<int64_t>(i));
    axes.push_back({from_sharding.subgroup_types()[i] == SubgroupType::kManual
                        ? Axis::Kind::kManual
                        : Axis::Kind::kReplicated,
                    size});
  }
  for (const Axis& a : axes) axis_dims.push_back(a.size);

  // 2. Assign factor axes to the target dims.
  std::vector<bool> placed(axes.size(), false);
  std::vector<int64_t> perm;
  std::vector<int64_t> out_dims;
  for (const std::vector<int64_t>& factors : to) {
    int64_t tile = 1;
    bool contiguous = true;  // false once a factor is only partly split
    for (int64_t id : factors) {
      for (size_t a = 0; a < axes.size(); ++a) {
        if (axes[a].kind != Axis::Kind::kFactor || axes[a].factor != id || placed[a]) continue;
        if (!contiguous || rule.factors[static_cast<size_t>(id)].kind ==
                               FactorKind::kNeedReplication) {
          break;  // becomes replication below
        }
        placed[a] = true;
        perm.push_back(static_cast<int64_t>(a));
        tile *= axes[a].size;
        if (axes[a].size < rule.factors[static_cast<size_t>(id)].size) contiguous = false;
        break;
      }
      // Row-major order: a more minor factor can only be split if every more
      // major factor of the dim is split completely.
      bool split = false;
      for (size_t a = 0; a < axes.size(); ++a)
        if (placed[a] && axes[a].factor == id) split = true;
      if (!split && rule.factors[static_cast<size_t>(id)].size > 1) contiguous = false;
    }
    out_dims.push_back(tile);
  }
  // 3. Manual axes, then everything left over as replication.
  int64_t manual = 1, replicated = 1;
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!placed[a] && axes[a].kind == Axis::Kind::kManual) {
      perm.push_back(static_cast<int64_t>(a));
      manual *= axes[a].size;
      placed[a] = true;
    }
  }
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!placed[a]) {
      perm.push_back(static_cast<int64_t>(a));
      replicated *= axes[a].size;
    }
  }
  std::vector<SubgroupType> subgroups;
  if (manual > 1) {
    out_dims.push_back(manual);
    subgroups.push_back(SubgroupType::kManual);
  }
  if (replicated > 1) {
    out_dims.push_back(replicated);
    subgroups.push_back(SubgroupType::kReplicated);
  }
  bool identity_perm = true;
  for (size_t i = 0; i < perm.size(); ++i) identity_perm &= perm[i] == static_cast<int64_t>(i);
  TileAssignment moved = identity_perm ? tiles.Reshaped(out_dims)
                                       : tiles.Reshaped(axis_dims).Transposed(perm).Reshaped(out_dims);
  return Sharding::Tiled(std::move(moved), std::move(subgroups));
}

std::vector<int64_t> FactorTileCounts(const Sharding& sharding, const DimFactors& dims,
                                      const ShardingRule& rule) {
  std::vector<int64_t> counts(rule.factors.size(), 1);
  if (!sharding.IsTiled() || sharding.TiledDataRank() != static_cast<int64_t>(dims.size())) {
    return counts;
  }
  std::vector<Axis> axes;
  for (int64_t d = 0; d < sharding.TiledDataRank(); ++d) {
    SplitDim(sharding.TileCount(d), dims[static_cast<size_t>(d)], rule, axes);
  }
  for (const Axis& a : axes) {
    if (a.kind == Axis::Kind::kFactor) counts[static_cast<size_t>(a.factor)] *= a.size;
  }
  return counts;
}

}  // namespace sharc::spmd
