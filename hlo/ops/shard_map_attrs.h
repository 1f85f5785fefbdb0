// The attributes of shard_map and its named-axis collectives, read from their
// canonical text (mesh={i=4, j=2}, in_specs={P(i), P()}, axes={i,j}), and the
// mesh geometry those ops share: which devices form the group of an axis set
// and where a device sits in it. The parser, the op definitions, the variance
// pass and the lowering all use these, so the rules are stated once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

// Per array dimension, the mesh axes splitting it (major to minor); empty =
// not split. P((i,j), None) is {{"i","j"}, {}}.
using AxisSpec = std::vector<std::vector<std::string>>;

// Text <-> value. Parsers take the text between the outer braces and return
// a message (no location) on error; printers give the canonical form.
absl::StatusOr<std::vector<MeshAxis>> ParseMeshText(std::string_view text);
absl::StatusOr<std::vector<AxisSpec>> ParseSpecsText(std::string_view text);
absl::StatusOr<std::vector<std::string>> ParseAxesText(std::string_view text);
std::string PrintMeshText(const std::vector<MeshAxis>& mesh);
std::string PrintSpecText(const AxisSpec& spec);  // "P(i, None)"
std::string PrintSpecsText(const std::vector<AxisSpec>& specs);
std::string PrintAxesText(const std::vector<std::string>& axes);

// A named mesh whose devices are numbered row-major over its axes (the
// first axis is the most major), as the module header's mesh is.
class ManualMesh {
 public:
  ManualMesh() = default;
  explicit ManualMesh(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {}
  const std::vector<MeshAxis>& axes() const { return axes_; }
  int64_t num_devices() const;
  // Index of the axis named `name`, or -1.
  int64_t AxisIndex(std::string_view name) const;
  int64_t AxisSize(std::string_view name) const;
  // Product of the sizes of `names` (the size of their combined group).
  int64_t GroupSize(const std::vector<std::string>& names) const;
  // Coordinates of `device` on every axis, and back.
  std::vector<int64_t> Coordinates(int64_t device) const;
  int64_t Device(const std::vector<int64_t>& coordinates) const;
  // Position of `device` in its group over `names`: its coordinates on those
  // axes linearised in the order listed (JAX's axis_index of a tuple).
  int64_t GroupPosition(int64_t device, const std::vector<std::string>& names) const;
  // The devices of `device`'s group over `names`, in position order.
  std::vector<int64_t> GroupMembers(int64_t device, const std::vector<std::string>& names) const;
  // Every group over `names` (XLA replica groups), ordered by first member.
  std::vector<std::vector<int64_t>> AllGroups(const std::vector<std::string>& names) const;

 private:
  std::vector<MeshAxis> axes_;
};

// The mesh of a shard_map: its `mesh` attribute, else the module header's.
absl::StatusOr<ManualMesh> ShardMapMesh(const Instruction& shard_map);
// The mesh a named-axis collective runs over: that of the shard_map whose
// body (directly, or through calls, loops and branches) contains `inst`,
// else the module header's mesh. Errors when there is neither.
absl::StatusOr<ManualMesh> EnclosingMesh(const Instruction& inst);

// While a frontend traces a shard_map body, its instructions belong to no
// module yet, so EnclosingMesh cannot reach the shard_map; the tracer names
// the body's mesh for the duration (innermost scope wins), and EnclosingMesh
// falls back to it.
class TracingMeshScope {
 public:
  explicit TracingMeshScope(std::vector<MeshAxis> mesh);
  ~TracingMeshScope();
  TracingMeshScope(const TracingMeshScope&) = delete;
  TracingMeshScope& operator=(const TracingMeshScope&) = delete;
};

// in_specs / out_specs of a shard_map, parsed.
absl::StatusOr<std::vector<AxisSpec>> ShardMapSpecs(const Instruction& shard_map,
                                                    std::string_view attr);
// The `axes` attribute of a named-axis collective, checked against `mesh`:
// at least one axis, each in the mesh, none twice.
absl::StatusOr<std::vector<std::string>> CollectiveAxes(const Instruction& inst,
                                                        const ManualMesh& mesh);

// The axes a spec names, in mesh order (an input's variance).
std::vector<std::string> SpecAxes(const AxisSpec& spec, const ManualMesh& mesh);
// The per-device shape of `global` under `spec` (dims divided by the product
// of their axes); errors name the dimension and the sizes.
absl::StatusOr<Shape> LocalShape(const Shape& global, const AxisSpec& spec,
                                 const ManualMesh& mesh);
absl::StatusOr<Shape> GlobalShape(const Shape& local, const AxisSpec& spec,
                                  const ManualMesh& mesh);

}  // namespace sharc::hlo
