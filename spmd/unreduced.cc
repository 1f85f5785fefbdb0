#include "spmd/unreduced.h"

#include <map>

namespace sharc::spmd {

using hlo::Sharding;
using hlo::SubgroupType;

namespace {

// The multi-index of `device` in the tile assignment (empty if absent).
std::vector<int64_t> IndexOf(const hlo::TileAssignment& tiles, int64_t device) {
  const std::vector<int64_t>& devices = tiles.devices();
  for (size_t p = 0; p < devices.size(); ++p) {
    if (devices[p] != device) continue;
    std::vector<int64_t> index(static_cast<size_t>(tiles.num_dims()));
    int64_t rest = static_cast<int64_t>(p);
    for (int64_t d = tiles.num_dims() - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % tiles.dim(d);
      rest /= tiles.dim(d);
    }
    return index;
  }
  return {};
}

// The tile-assignment dim of each subgroup of `type` (at most one after
// normalisation, but any number is handled).
std::vector<int64_t> SubgroupDims(const Sharding& sharding, SubgroupType type) {
  std::vector<int64_t> dims;
  const int64_t rank = sharding.TiledDataRank();
  for (size_t i = 0; i < sharding.subgroup_types().size(); ++i) {
    if (sharding.subgroup_types()[i] == type) dims.push_back(rank + static_cast<int64_t>(i));
  }
  return dims;
}

// True if `device` sits at index 0 along every dim of `dims`.
bool FirstAlong(const Sharding& sharding, int64_t device, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index = IndexOf(sharding.tile_assignment(), device);
  if (index.empty()) return false;
  for (int64_t d : dims) {
    if (index[static_cast<size_t>(d)] != 0) return false;
  }
  return true;
}

}  // namespace

Sharding ReducedForm(const Sharding& sharding) {
  if (sharding.IsTuple()) {
    std::vector<Sharding> leaves;
    for (const Sharding& leaf : sharding.tuple_elements()) leaves.push_back(ReducedForm(leaf));
    return Sharding::Tuple(std::move(leaves));
  }
  if (sharding.kind() == Sharding::Kind::kUnreduced) return Sharding::Replicated();
  if (!sharding.IsTiled() || !sharding.HasUnreduced()) return sharding;
  std::vector<SubgroupType> types = sharding.subgroup_types();
  for (SubgroupType& t : types) {
    if (t == SubgroupType::kUnreduced) t = SubgroupType::kReplicated;
  }
  return Sharding::Tiled(sharding.tile_assignment(), std::move(types));
}

std::vector<std::vector<int64_t>> UnreducedGroups(const Sharding& sharding,
                                                  int64_t num_devices) {
  if (sharding.kind() == Sharding::Kind::kUnreduced) {
    std::vector<int64_t> all;
    for (int64_t d = 0; d < num_devices; ++d) all.push_back(d);
    return {all};
  }
  if (!sharding.IsTiled()) return {};
  const std::vector<int64_t> unreduced = SubgroupDims(sharding, SubgroupType::kUnreduced);
  if (unreduced.empty()) return {};
  // Devices that agree on every other tile index share a group; the row-major
  // walk orders each group along the unreduced dim.
  const hlo::TileAssignment& tiles = sharding.tile_assignment();
  std::map<std::vector<int64_t>, size_t> group_of;
  std::vector<std::vector<int64_t>> groups;
  for (int64_t device : tiles.devices()) {
    std::vector<int64_t> key = IndexOf(tiles, device);
    for (int64_t d : unreduced) key[static_cast<size_t>(d)] = 0;
    auto [it, fresh] = group_of.emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(device);
  }
  return groups;
}

bool HoldsWholeValue(const Sharding& sharding, int64_t device) {
  if (sharding.kind() == Sharding::Kind::kUnreduced) return device == 0;
  if (!sharding.IsTiled()) return true;
  return FirstAlong(sharding, device, SubgroupDims(sharding, SubgroupType::kUnreduced));
}

bool CountsInSum(const Sharding& sharding, int64_t device) {
  if (sharding.kind() == Sharding::Kind::kUnreduced) return true;
  if (!sharding.IsTiled()) return device == 0;
  return FirstAlong(sharding, device, SubgroupDims(sharding, SubgroupType::kReplicated));
}

}  // namespace sharc::spmd
