// Shardy's sharding model, as JAX writes it into HLO text (Shardy's "round
// trip" form: frontend attributes `xla.sdy.meshes` on the module and
// `xla.sdy.sharding` on instructions), and its meaning as an XLA sharding.
//
// A Shardy mesh names its axes (`#sdy.mesh<["x"=2, "y"=4]>`); a tensor's
// sharding lists, per dimension, the axes that split it, major first
// (`#sdy.sharding<@mesh, [{"y"}, {"x"}]>`). An axis may be split into
// sub-axes (`"x":(2)4` is the part of "x" of size 4 below a major part of
// size 2: on an axis of 8, its minor 4). The XLA sharding is the mesh's device array with the axes that
// split dims moved to the front in that order and the others gathered into
// one replication group (XLA's convertToHloSharding):
//
//   mesh ["x"=2, "y"=4], [{"y"}, {"x"}]  ->  {devices=[4,2]<=[2,4]T(1,0)}
//   mesh ["x"=2, "y"=4], [{"y"}, {}]     ->  {devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}
//
// Inside a shard_map body the region's manual axes form a manual subgroup
// (all axes manual: `{manual}`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/sharding.h"

namespace sharc::hlo {

struct SdyMeshAxis {
  std::string name;
  int64_t size = 1;
};

struct SdyMesh {
  std::vector<SdyMeshAxis> axes;
  // Empty: the devices are 0..N-1 in mesh order.
  std::vector<int64_t> device_ids;

  // Product of the axis sizes (1 for a mesh without axes; int64 max if it
  // would overflow).
  int64_t num_devices() const;
  // nullopt if the mesh has no such axis.
  std::optional<int64_t> AxisSize(const std::string& name) const;
};

// An axis, or the sub-axis `"name":(pre_size)size` of it. A whole axis has
// sub_axis == false (pre_size 1, size = the axis's).
struct SdyAxisRef {
  std::string name;
  bool sub_axis = false;
  int64_t pre_size = 1;
  int64_t size = 1;
};

struct SdyDimSharding {
  std::vector<SdyAxisRef> axes;  // major to minor
  // `{?}` / `{"x", ?}`: propagation may split the dim further.
  bool open = false;
};

struct SdyTensorSharding {
  // `@name`, or empty when the mesh is written inline.
  std::string mesh_name;
  std::optional<SdyMesh> inline_mesh;
  std::vector<SdyDimSharding> dims;
  std::vector<SdyAxisRef> replicated;  // explicitly replicated axes
  std::vector<SdyAxisRef> unreduced;

  bool HasOpenDims() const;
};

// The sharding without the axes named in `axes` (a shard_map's manual axes,
// which its body does not see).
SdyTensorSharding EraseAxes(const SdyTensorSharding& sharding,
                            absl::Span<const std::string> axes);

// The XLA sharding that `sharding` over `mesh` denotes, with `manual_axes`
// (the enclosing shard_maps' manual axes, outermost first) as a manual
// subgroup. Errors name the axis at fault (unknown, used twice, a sub-axis
// that does not divide its axis, a manual axis also splitting a dim).
absl::StatusOr<Sharding> SdyToHloSharding(const SdyTensorSharding& sharding, const SdyMesh& mesh,
                                          absl::Span<const std::string> manual_axes);

}  // namespace sharc::hlo
