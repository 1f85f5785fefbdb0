#include "hlo/ir/sdy_sharding.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "hlo/ir/device_limits.h"

namespace sharc::hlo {

int64_t SdyMesh::num_devices() const {
  // Saturates (at int64 max) rather than overflow on a mesh read from text.
  int64_t n = 1;
  for (const SdyMeshAxis& axis : axes) {
    if (axis.size < 1) return 0;
    if (n > std::numeric_limits<int64_t>::max() / axis.size) return std::numeric_limits<int64_t>::max();
    n *= axis.size;
  }
  return n;
}

std::optional<int64_t> SdyMesh::AxisSize(const std::string& name) const {
  for (const SdyMeshAxis& axis : axes) {
    if (axis.name == name) return axis.size;
  }
  return std::nullopt;
}

bool SdyTensorSharding::HasOpenDims() const {
  return std::any_of(dims.begin(), dims.end(), [](const SdyDimSharding& d) { return d.open; });
}

namespace {

bool Named(absl::Span<const std::string> names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<SdyAxisRef> Without(const std::vector<SdyAxisRef>& refs,
                                absl::Span<const std::string> names) {
  std::vector<SdyAxisRef> kept;
  for (const SdyAxisRef& ref : refs) {
    if (!Named(names, ref.name)) kept.push_back(ref);
  }
  return kept;
}

// An axis ref as a range [pre_size, pre_size * size) of its axis's strides;
// a whole axis is [1, axis size).
struct AxisPart {
  std::string name;
  int64_t pre_size;
  int64_t size;
  bool operator<(const AxisPart& o) const {
    return std::tie(name, pre_size, size) < std::tie(o.name, o.pre_size, o.size);
  }
};

std::string RefText(const SdyAxisRef& ref) {
  if (!ref.sub_axis) return absl::StrCat("\"", ref.name, "\"");
  return absl::StrCat("\"", ref.name, "\":(", ref.pre_size, ")", ref.size);
}

absl::StatusOr<AxisPart> Resolve(const SdyAxisRef& ref, const SdyMesh& mesh) {
  std::optional<int64_t> axis_size = mesh.AxisSize(ref.name);
  if (!axis_size) {
    return absl::InvalidArgumentError(absl::StrCat("sharding names axis ", RefText(ref),
                                                   ", which the mesh does not have"));
  }
  if (!ref.sub_axis) return AxisPart{ref.name, 1, *axis_size};
  if (ref.pre_size < 1 || ref.size < 2 || *axis_size % ref.pre_size != 0 ||
      (*axis_size / ref.pre_size) % ref.size != 0) {
    return absl::InvalidArgumentError(absl::StrCat("sub-axis ", RefText(ref),
                                                   " does not divide axis \"", ref.name,
                                                   "\" of size ", *axis_size));
  }
  return AxisPart{ref.name, ref.pre_size, ref.size};
}

}  // namespace

SdyTensorSharding EraseAxes(const SdyTensorSharding& sharding,
                            absl::Span<const std::string> axes) {
  SdyTensorSharding erased = sharding;
  for (SdyDimSharding& dim : erased.dims) dim.axes = Without(dim.axes, axes);
  erased.replicated = Without(erased.replicated, axes);
  erased.unreduced = Without(erased.unreduced, axes);
  return erased;
}

absl::StatusOr<Sharding> SdyToHloSharding(const SdyTensorSharding& sharding, const SdyMesh& mesh,
                                          absl::Span<const std::string> manual_axes) {
  if (mesh.axes.empty()) {
    return mesh.device_ids.empty() ? Sharding::Replicated()
                                   : Sharding::Maximal(mesh.device_ids.front());
  }
  for (const std::string& axis : manual_axes) {
    if (!mesh.AxisSize(axis)) {
      return absl::InvalidArgumentError(
          absl::StrCat("manual axis \"", axis, "\" is not an axis of the mesh"));
    }
  }
  if (manual_axes.size() == mesh.axes.size()) return Sharding::Manual();
  if (mesh.num_devices() > kMaxDevices) {
    return absl::InvalidArgumentError(
        absl::StrCat("the mesh has ", mesh.num_devices(), " devices, more than ", kMaxDevices));
  }
  if (!mesh.device_ids.empty() && static_cast<int64_t>(mesh.device_ids.size()) != mesh.num_devices()) {
    return absl::InvalidArgumentError(absl::StrCat("the mesh lists ", mesh.device_ids.size(),
                                                   " device ids for ", mesh.num_devices(),
                                                   " devices"));
  }

  // Tile dims in order: data dims, then the manual and unreduced subgroups;
  // every axis part that splits one gets its position in that order.
  std::vector<int64_t> tile_dims(sharding.dims.size(), 1);
  std::vector<SubgroupType> subgroups;
  std::map<AxisPart, int64_t> position;
  int64_t next_position = 0;
  // Sub-axis boundaries per axis (XLA's getOrderedAxisRefs): every axis is
  // cut where some sub-axis starts or ends.
  std::map<std::string, std::set<int64_t>> cuts;
  for (const SdyMeshAxis& axis : mesh.axes) cuts[axis.name] = {1, axis.size};
  auto place = [&](const SdyAxisRef& ref, int64_t& tile_dim) -> absl::Status {
    if (Named(manual_axes, ref.name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "axis ", RefText(ref), " splits a dimension but is manual in the enclosing shard_map"));
    }
    absl::StatusOr<AxisPart> part = Resolve(ref, mesh);
    if (!part.ok()) return part.status();
    if (position.count(*part)) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", RefText(ref), " is used twice in one sharding"));
    }
    position[*part] = next_position++;
    tile_dim *= part->size;
    cuts[part->name].insert(part->pre_size);
    cuts[part->name].insert(part->pre_size * part->size);
    return absl::OkStatus();
  };
  for (size_t d = 0; d < sharding.dims.size(); ++d) {
    for (const SdyAxisRef& ref : sharding.dims[d].axes) {
      if (absl::Status s = place(ref, tile_dims[d]); !s.ok()) return s;
    }
  }
  if (!manual_axes.empty()) {
    subgroups.push_back(SubgroupType::kManual);
    tile_dims.push_back(1);
    for (const std::string& axis : manual_axes) {
      const AxisPart part{axis, 1, *mesh.AxisSize(axis)};
      position[part] = next_position++;
      tile_dims.back() *= part.size;
    }
  }
  if (!sharding.unreduced.empty()) {
    subgroups.push_back(SubgroupType::kUnreduced);
    tile_dims.push_back(1);
    for (const SdyAxisRef& ref : sharding.unreduced) {
      if (absl::Status s = place(ref, tile_dims.back()); !s.ok()) return s;
    }
  }

  // The mesh's device array, its axes cut into those parts.
  std::vector<AxisPart> parts;
  for (const SdyMeshAxis& axis : mesh.axes) {
    const std::set<int64_t>& at = cuts[axis.name];
    for (auto it = at.begin(); std::next(it) != at.end(); ++it) {
      if (*std::next(it) % *it != 0) {
        return absl::InvalidArgumentError(absl::StrCat("the sub-axes of \"", axis.name,
                                                       "\" in one sharding overlap"));
      }
      parts.push_back(AxisPart{axis.name, *it, *std::next(it) / *it});
    }
  }
  // A sub-axis's pre-size is the product of the parts more major than it,
  // so ascending pre-sizes list an axis major first, as the device array is.
  const std::vector<AxisPart>& ordered = parts;
  int64_t placed = 0;
  for (const AxisPart& part : ordered) placed += position.count(part);
  if (placed != next_position) {
    return absl::InvalidArgumentError("a sharding's sub-axes overlap or do not tile their axes");
  }
  std::vector<int64_t> reshape(ordered.size());
  std::vector<int64_t> perm(ordered.size());
  int64_t replicated = 1;
  int64_t replicated_position = next_position;
  for (size_t i = 0; i < ordered.size(); ++i) {
    reshape[i] = ordered[i].size;
    auto found = position.find(ordered[i]);
    if (found == position.end()) {
      perm[static_cast<size_t>(replicated_position++)] = static_cast<int64_t>(i);
      replicated *= ordered[i].size;
    } else {
      perm[static_cast<size_t>(found->second)] = static_cast<int64_t>(i);
    }
  }
  if (replicated > 1) {
    tile_dims.push_back(replicated);
    subgroups.push_back(SubgroupType::kReplicated);
  }
  TileAssignment iota = TileAssignment::Iota(tile_dims, reshape, perm);
  if (mesh.device_ids.empty()) return Sharding::Tiled(std::move(iota), std::move(subgroups));
  std::vector<int64_t> devices;
  devices.reserve(iota.devices().size());
  for (int64_t index : iota.devices()) devices.push_back(mesh.device_ids[static_cast<size_t>(index)]);
  return Sharding::Tiled(TileAssignment(tile_dims, std::move(devices)), std::move(subgroups));
}

}  // namespace sharc::hlo
