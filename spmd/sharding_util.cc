#include "spmd/sharding_util.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace sharc::spmd {

using hlo::Sharding;
using hlo::SubgroupType;
using hlo::TileAssignment;

bool IsMoreSpecific(const Sharding& candidate, const Sharding& current) {
  if (candidate.IsTuple() || current.IsTuple()) {
    if (!candidate.IsTuple() || !current.IsTuple() ||
        candidate.tuple_elements().size() != current.tuple_elements().size()) {
      return false;
    }
    bool better = false;
    for (size_t i = 0; i < candidate.tuple_elements().size(); ++i) {
      const Sharding& c = candidate.tuple_elements()[i];
      const Sharding& o = current.tuple_elements()[i];
      if (IsMoreSpecific(o, c)) return false;
      if (IsMoreSpecific(c, o)) better = true;
    }
    return better;
  }
  if (candidate.IsManual() && current.IsTileMaximal()) return true;
  if (candidate.IsManual() || current.IsManual()) return false;
  if (!current.IsTileMaximal()) {
    return candidate.IsTiled() && candidate.NumTiles() > current.NumTiles();
  }
  if (!current.IsReplicated()) return !candidate.IsTileMaximal();
  return !candidate.IsReplicated();
}

namespace {

// [start, limit) of `device`'s tile along each dim.
bool TileBounds(const hlo::Shape& shape, const Sharding& s, int64_t device,
                std::vector<int64_t>& lo, std::vector<int64_t>& hi) {
  lo.assign(static_cast<size_t>(shape.rank()), 0);
  hi = shape.dims();
  if (!s.IsTiled()) return true;
  std::optional<std::vector<int64_t>> idx = s.TileIndexForDevice(device);
  if (!idx) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    int64_t tiles = s.TileCount(d);
    int64_t size = (shape.dim(d) + tiles - 1) / tiles;
    lo[d] = std::min((*idx)[d] * size, shape.dim(d));
    hi[d] = std::min(lo[d] + size, shape.dim(d));
  }
  return true;
}

}  // namespace

bool IsSubTilingOrEqual(const hlo::Shape& shape, const Sharding& candidate,
                        const Sharding& current) {
  if (candidate == current) return true;
  if (!current.IsTiled()) return !current.IsMaximal();
  if (!candidate.IsTiled()) return false;
  if (candidate.TiledDataRank() != shape.rank() || current.TiledDataRank() != shape.rank())
    return false;
  std::vector<int64_t> devices = current.Devices();
  if (candidate.Devices() != devices) return false;
  std::vector<int64_t> clo, chi, olo, ohi;
  for (int64_t device : devices) {
    if (!TileBounds(shape, candidate, device, clo, chi)) return false;
    if (!TileBounds(shape, current, device, olo, ohi)) return false;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      // Empty tiles (padding only) fit anywhere.
      if (clo[d] >= chi[d]) continue;
      if (clo[d] < olo[d] || chi[d] > ohi[d]) return false;
    }
  }
  return true;
}

namespace {

// The devices holding data tile `index` (of the data dims) of `s`.
std::vector<int64_t> GroupAt(const Sharding& s, const std::vector<int64_t>& index) {
  const TileAssignment& t = s.tile_assignment();
  int64_t rank = s.TiledDataRank();
  int64_t group = 1;
  for (int64_t d = rank; d < t.num_dims(); ++d) group *= t.dim(d);
  int64_t linear = 0;
  for (int64_t d = 0; d < rank; ++d) linear = linear * t.dim(d) + index[static_cast<size_t>(d)];
  std::vector<int64_t> out(t.devices().begin() + linear * group,
                           t.devices().begin() + (linear + 1) * group);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::optional<Sharding> MergeCompatible(const Sharding& a, const Sharding& b, bool b_may_be_tiled) {
  if (!a.IsTiled() || !b.IsTiled()) return std::nullopt;
  if (!a.ReplicateOnLastTileDim()) return std::nullopt;
  if (!b.ReplicateOnLastTileDim() && !b_may_be_tiled) return std::nullopt;
  if (a.HasManualSubgroup() || b.HasManualSubgroup()) return std::nullopt;
  if (a.TiledDataRank() != b.TiledDataRank()) return std::nullopt;
  if (a.tile_assignment().num_devices() != b.tile_assignment().num_devices()) return std::nullopt;
  const int64_t rank = a.TiledDataRank();
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    int64_t ta = a.TileCount(d), tb = b.TileCount(d);
    if (ta != 1 && tb != 1 && ta != tb) return std::nullopt;
    dims[d] = std::max(ta, tb);
  }
  int64_t merged_tiles = 1;
  for (int64_t t : dims) merged_tiles *= t;
  const int64_t num_devices = a.tile_assignment().num_devices();
  if (merged_tiles <= a.NumTiles() && merged_tiles <= b.NumTiles()) return std::nullopt;
  if (num_devices % merged_tiles != 0) return std::nullopt;
  const int64_t group = num_devices / merged_tiles;
  std::vector<int64_t> devices;
  devices.reserve(static_cast<size_t>(num_devices));
  std::vector<int64_t> index(static_cast<size_t>(rank), 0), ia(index), ib(index);
  bool done = merged_tiles == 0;
  while (!done) {
    for (int64_t d = 0; d < rank; ++d) {
      ia[d] = a.TileCount(d) == 1 ? 0 : index[d];
      ib[d] = b.TileCount(d) == 1 ? 0 : index[d];
    }
    std::vector<int64_t> ga = GroupAt(a, ia), gb = GroupAt(b, ib), both;
    std::set_intersection(ga.begin(), ga.end(), gb.begin(), gb.end(), std::back_inserter(both));
    if (static_cast<int64_t>(both.size()) != group) return std::nullopt;
    devices.insert(devices.end(), both.begin(), both.end());
    done = !hlo::NextIndex(dims, index);
  }
  if (group > 1) dims.push_back(group);
  TileAssignment tiles(dims, devices);
  if (group > 1) return Sharding::PartialTile(std::move(tiles));
  return Sharding::Tiled(std::move(tiles));
}

bool EvenlyDivides(const hlo::Shape& shape, const Sharding& sharding) {
  if (!sharding.IsTiled()) return true;
  for (int64_t d = 0; d < shape.rank() && d < sharding.TiledDataRank(); ++d) {
    if (shape.dim(d) % sharding.TileCount(d) != 0) return false;
  }
  return true;
}

Sharding ReplicateDims(const Sharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const int64_t rank = sharding.TiledDataRank();
  const TileAssignment& t = sharding.tile_assignment();
  // Order the array as [kept data dims, manual, replicated data dims,
  // existing replication] so the last two merge into one replication dim.
  std::vector<int64_t> perm;
  int64_t replicated = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    perm.push_back(d);
  }
  std::vector<SubgroupType> subgroups;
  // Manual subgroups stay; replicated ones absorb the dims.
  for (size_t i = 0; i < sharding.subgroup_types().size(); ++i) {
    if (sharding.subgroup_types()[i] == SubgroupType::kManual) {
      perm.push_back(rank + static_cast<int64_t>(i));
      subgroups.push_back(SubgroupType::kManual);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) continue;
    perm.push_back(d);
    replicated *= t.dim(d);
  }
  for (size_t i = 0; i < sharding.subgroup_types().size(); ++i) {
    if (sharding.subgroup_types()[i] == SubgroupType::kReplicated) {
      perm.push_back(rank + static_cast<int64_t>(i));
      replicated *= t.dim(rank + static_cast<int64_t>(i));
    }
  }
  // The replicated data dims stay, with one tile each.
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    out_dims.push_back(std::find(dims.begin(), dims.end(), d) != dims.end() ? 1 : t.dim(d));
  }
  for (size_t i = 0; i < sharding.subgroup_types().size(); ++i) {
    if (sharding.subgroup_types()[i] == SubgroupType::kManual)
      out_dims.push_back(t.dim(rank + static_cast<int64_t>(i)));
  }
  if (replicated > 1) {
    out_dims.push_back(replicated);
    subgroups.push_back(SubgroupType::kReplicated);
  }
  TileAssignment moved = t.Transposed(perm).Reshaped(out_dims);
  return Sharding::Tiled(std::move(moved), std::move(subgroups));
}

hlo::Sharding ShardingOrReplicated(const hlo::Instruction& inst) {
  return inst.sharding() ? *inst.sharding() : hlo::Sharding::Replicated();
}

bool IsManualLike(const hlo::Sharding& sharding) {
  if (sharding.IsManual()) return true;
  if (!sharding.IsTuple() || sharding.tuple_elements().empty()) return false;
  for (const hlo::Sharding& e : sharding.tuple_elements()) {
    if (!IsManualLike(e)) return false;
  }
  return true;
}

bool IsManualLike(const hlo::Sharding& sharding, const hlo::Shape& shape) {
  if (!sharding.IsTuple() || !shape.is_tuple() ||
      sharding.tuple_elements().size() != static_cast<size_t>(shape.tuple_size())) {
    return IsManualLike(sharding);
  }
  bool any_data = false;
  for (size_t i = 0; i < sharding.tuple_elements().size(); ++i) {
    const hlo::Shape& leaf = shape.tuple_shape(static_cast<int64_t>(i));
    if (leaf.is_array() && leaf.type() == hlo::PrimitiveType::kToken) continue;
    if (!IsManualLike(sharding.tuple_elements()[i], leaf)) return false;
    any_data = true;
  }
  return any_data;
}

Sharding MoveTiles(const Sharding& sharding, int64_t from, int64_t to, int64_t g) {
  const TileAssignment& tiles = sharding.tile_assignment();
  const int64_t S = tiles.dim(from), T = tiles.dim(to);
  // `from` as [S/g, g] and `to` as [T, 1]; the g part and the 1 swap places.
  std::vector<int64_t> split;
  int64_t from_minor = 0, to_minor = 0;
  for (int64_t i = 0; i < tiles.num_dims(); ++i) {
    if (i == from) {
      split.push_back(S / g);
      split.push_back(g);
      from_minor = static_cast<int64_t>(split.size()) - 1;
    } else if (i == to) {
      split.push_back(T);
      split.push_back(1);
      to_minor = static_cast<int64_t>(split.size()) - 1;
    } else {
      split.push_back(tiles.dim(i));
    }
  }
  std::vector<int64_t> perm(split.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(from_minor)], perm[static_cast<size_t>(to_minor)]);
  std::vector<int64_t> moved = tiles.dims();
  moved[static_cast<size_t>(from)] = S / g;
  moved[static_cast<size_t>(to)] = T * g;
  return Sharding::Tiled(tiles.Reshaped(split).Transposed(perm).Reshaped(moved),
                         sharding.subgroup_types());
}

}  // namespace sharc::spmd
