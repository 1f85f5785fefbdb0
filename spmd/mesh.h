// Named device meshes and JAX-style PartitionSpecs, and their conversion to
// and from the IR's Sharding.
//
// A Mesh is an ordered list of named axes over a device array (by default the
// devices 0..N-1 in row-major order). A PartitionSpec names, for each array
// dimension, the mesh axes that split it (major to minor); axes it does not
// name replicate the value. P("x", None) on mesh {x=2, y=2} is
// {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/ir/sharding.h"

namespace sharc::spmd {

class Mesh {
 public:
  Mesh() = default;
  // Validates names (non-empty, distinct), sizes (>= 1, at most
  // hlo::kMaxDevices devices in all) and device ids (a permutation of
  // 0..N-1; empty = iota).
  static absl::StatusOr<Mesh> Create(std::vector<hlo::MeshAxis> axes,
                                     std::vector<int64_t> device_ids = {});
  // Parses "x=2,y=4" or "{x=2, y=4}".
  static absl::StatusOr<Mesh> Parse(std::string_view text);
  // A 1-D mesh named `axis` over n devices.
  static Mesh OneDimensional(std::string axis, int64_t n);

  const std::vector<hlo::MeshAxis>& axes() const { return axes_; }
  int64_t num_axes() const { return static_cast<int64_t>(axes_.size()); }
  int64_t num_devices() const;
  const std::vector<int64_t>& device_ids() const { return device_ids_; }
  std::optional<int64_t> AxisIndex(std::string_view name) const;
  int64_t AxisSize(int64_t index) const { return axes_[static_cast<size_t>(index)].size; }

  // "{x=2, y=4}"
  std::string ToString() const;
  bool operator==(const Mesh& o) const { return axes_ == o.axes_ && device_ids_ == o.device_ids_; }

 private:
  std::vector<hlo::MeshAxis> axes_;
  std::vector<int64_t> device_ids_;
};

class PartitionSpec {
 public:
  PartitionSpec() = default;
  // One entry per array dimension: the axes splitting it (empty = None).
  explicit PartitionSpec(std::vector<std::vector<std::string>> dims) : dims_(std::move(dims)) {}
  // Parses "P(x, None)", "P((x,y), _)", "P()".
  static absl::StatusOr<PartitionSpec> Parse(std::string_view text);

  const std::vector<std::vector<std::string>>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  // "P(x, None)", "P((x,y))"; trailing Nones are kept.
  std::string ToString() const;
  bool operator==(const PartitionSpec& o) const { return dims_ == o.dims_; }

 private:
  std::vector<std::vector<std::string>> dims_;
};

// The Sharding for a value of rank `rank` laid out by `spec` over `mesh`. A
// spec shorter than the rank leaves trailing dims unsplit. Errors name the
// unknown or repeated axis, or a spec longer than the rank.
absl::StatusOr<hlo::Sharding> ToSharding(const Mesh& mesh, const PartitionSpec& spec,
                                         int64_t rank);
// A PartitionSpec over `mesh` that denotes `sharding`, if one exists.
absl::StatusOr<PartitionSpec> ToPartitionSpec(const Mesh& mesh, const hlo::Sharding& sharding,
                                              int64_t rank);

}  // namespace sharc::spmd
