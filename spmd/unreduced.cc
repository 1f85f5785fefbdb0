#include "spmd/unreduced.h"

#include <algorithm>

#include "spmd/partition/reshard.h"

namespace sharc::spmd {

using hlo::Sharding;
using hlo::SubgroupType;

namespace {

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

// True if `device` comes first in its group along `dims` (index 0 there).
bool LeadsGroupAlong(const Sharding& sharding, int64_t device, const std::vector<int64_t>& dims) {
  for (const std::vector<int64_t>& group : GroupsAlongDims(sharding, dims)) {
    if (std::find(group.begin(), group.end(), device) != group.end()) {
      return group.front() == device;
    }
  }
  return false;
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
  return GroupsAlongDims(sharding, unreduced);
}

bool HoldsWholeValue(const Sharding& sharding, int64_t device) {
  if (sharding.kind() == Sharding::Kind::kUnreduced) return device == 0;
  if (!sharding.IsTiled()) return true;
  return LeadsGroupAlong(sharding, device, SubgroupDims(sharding, SubgroupType::kUnreduced));
}

bool CountsInSum(const Sharding& sharding, int64_t device) {
  if (sharding.kind() == Sharding::Kind::kUnreduced) return true;
  if (!sharding.IsTiled()) return device == 0;
  return LeadsGroupAlong(sharding, device, SubgroupDims(sharding, SubgroupType::kReplicated));
}

}  // namespace sharc::spmd
