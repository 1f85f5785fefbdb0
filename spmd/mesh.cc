#include "spmd/mesh.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/device_limits.h"

namespace sharc::spmd {

using hlo::MeshAxis;
using hlo::Sharding;
using hlo::TileAssignment;

absl::StatusOr<Mesh> Mesh::Create(std::vector<MeshAxis> axes, std::vector<int64_t> device_ids) {
  absl::flat_hash_set<std::string> names;
  int64_t total = 1;
  for (const MeshAxis& axis : axes) {
    if (axis.name.empty()) return absl::InvalidArgumentError("mesh axis has an empty name");
    if (!names.insert(axis.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate mesh axis name \"", axis.name, "\""));
    }
    if (axis.size < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh axis \"", axis.name, "\" has size ", axis.size, "; sizes must be >= 1"));
    }
    // Bounded before the device ids are allocated and sorted.
    if (total > hlo::kMaxDevices / axis.size) {
      return absl::InvalidArgumentError(
          absl::StrCat("mesh has more than ", hlo::kMaxDevices, " devices"));
    }
    total *= axis.size;
  }
  if (device_ids.empty()) {
    // The iota is a permutation by construction: no sort to prove it.
    device_ids.resize(static_cast<size_t>(total));
    std::iota(device_ids.begin(), device_ids.end(), 0);
  } else {
    if (static_cast<int64_t>(device_ids.size()) != total) {
      return absl::InvalidArgumentError(absl::StrCat("mesh has ", total, " positions but ",
                                                     device_ids.size(), " device ids"));
    }
    std::vector<int64_t> sorted = device_ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < total; ++i) {
      if (sorted[i] != i) {
        return absl::InvalidArgumentError(
            absl::StrCat("mesh device ids must be a permutation of 0..", total - 1));
      }
    }
  }
  Mesh mesh;
  mesh.axes_ = std::move(axes);
  mesh.device_ids_ = std::move(device_ids);
  return mesh;
}

absl::StatusOr<Mesh> Mesh::Parse(std::string_view text) {
  absl::string_view t(text.data(), text.size());
  t = absl::StripAsciiWhitespace(t);
  if (absl::ConsumePrefix(&t, "{") && !absl::ConsumeSuffix(&t, "}")) {
    return absl::InvalidArgumentError(absl::StrCat("mesh '", t, "' is missing a closing '}'"));
  }
  std::vector<MeshAxis> axes;
  if (!absl::StripAsciiWhitespace(t).empty()) {
    for (absl::string_view part : absl::StrSplit(t, ',')) {
      std::vector<absl::string_view> kv = absl::StrSplit(part, '=');
      int64_t size = 0;
      if (kv.size() != 2 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(kv[1]), &size)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "mesh axis '", absl::StripAsciiWhitespace(part), "' must be written name=size"));
      }
      axes.push_back(MeshAxis{std::string(absl::StripAsciiWhitespace(kv[0])), size});
    }
  }
  return Create(std::move(axes));
}

Mesh Mesh::OneDimensional(std::string axis, int64_t n) {
  return *Create({MeshAxis{std::move(axis), n}});
}

int64_t Mesh::num_devices() const { return static_cast<int64_t>(device_ids_.size()); }

std::optional<int64_t> Mesh::AxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

std::string Mesh::ToString() const {
  std::vector<std::string> parts;
  for (const MeshAxis& a : axes_) parts.push_back(absl::StrCat(a.name, "=", a.size));
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

absl::StatusOr<PartitionSpec> PartitionSpec::Parse(std::string_view text) {
  absl::string_view t = absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size()));
  if (!absl::ConsumePrefix(&t, "P(") || !absl::ConsumeSuffix(&t, ")")) {
    return absl::InvalidArgumentError(
        absl::StrCat("partition spec '", absl::string_view(text.data(), text.size()),
                     "' must be written P(...), e.g. P(x, None)"));
  }
  std::vector<std::vector<std::string>> dims;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < t.size() && absl::ascii_isspace(static_cast<unsigned char>(t[i]))) ++i;
  };
  auto read_name = [&]() -> std::string {
    skip_space();
    size_t start = i;
    while (i < t.size() && (absl::ascii_isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_' ||
                            t[i] == '.' || t[i] == '-'))
      ++i;
    return std::string(t.substr(start, i - start));
  };
  skip_space();
  while (i < t.size()) {
    std::vector<std::string> axes;
    skip_space();
    if (i < t.size() && t[i] == '(') {
      ++i;
      while (true) {
        std::string name = read_name();
        if (name.empty()) return absl::InvalidArgumentError("expected a mesh axis name in P(...)");
        // P((None)) would print as P(None), which means "not split".
        if (name == "None" || name == "_") {
          return absl::InvalidArgumentError(absl::StrCat(
              "'", name, "' cannot be in a grouped axis list of P(...); write it alone, as in P(",
              name, ")"));
        }
        axes.push_back(name);
        skip_space();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == ')') {
          ++i;
          break;
        }
        return absl::InvalidArgumentError("expected ',' or ')' in a grouped axis list of P(...)");
      }
    } else {
      std::string name = read_name();
      if (name.empty()) return absl::InvalidArgumentError("expected a mesh axis name in P(...)");
      if (name != "None" && name != "_") axes.push_back(name);
    }
    dims.push_back(std::move(axes));
    skip_space();
    if (i < t.size()) {
      if (t[i] != ',') return absl::InvalidArgumentError("expected ',' between P(...) entries");
      ++i;
      skip_space();
    }
  }
  return PartitionSpec(std::move(dims));
}

std::string PartitionSpec::ToString() const {
  std::vector<std::string> parts;
  for (const auto& axes : dims_) {
    if (axes.empty()) {
      parts.push_back("None");
    } else if (axes.size() == 1) {
      parts.push_back(axes[0]);
    } else {
      parts.push_back(absl::StrCat("(", absl::StrJoin(axes, ","), ")"));
    }
  }
  return absl::StrCat("P(", absl::StrJoin(parts, ", "), ")");
}

absl::StatusOr<Sharding> ToSharding(const Mesh& mesh, const PartitionSpec& spec, int64_t rank) {
  if (spec.rank() > rank) {
    return absl::InvalidArgumentError(absl::StrCat("partition spec ", spec.ToString(), " has ",
                                                   spec.rank(), " entries but the value has rank ",
                                                   rank));
  }
  std::vector<int64_t> used_order;  // mesh axes in the order the spec uses them
  std::vector<int64_t> tiles(static_cast<size_t>(rank), 1);
  absl::flat_hash_set<int64_t> used;
  for (int64_t d = 0; d < spec.rank(); ++d) {
    for (const std::string& name : spec.dims()[static_cast<size_t>(d)]) {
      std::optional<int64_t> axis = mesh.AxisIndex(name);
      if (!axis) {
        std::vector<std::string> names;
        for (const auto& a : mesh.axes()) names.push_back(a.name);
        return absl::InvalidArgumentError(absl::StrCat("unknown mesh axis \"", name, "\" in ",
                                                       spec.ToString(), " (mesh axes: ",
                                                       absl::StrJoin(names, ", "), ")"));
      }
      if (!used.insert(*axis).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("mesh axis \"", name, "\" is used twice in ", spec.ToString()));
      }
      used_order.push_back(*axis);
      tiles[static_cast<size_t>(d)] *= mesh.AxisSize(*axis);
    }
  }
  // Axes of size 1 split nothing: a spec over them alone is replication.
  bool splits = false;
  for (int64_t t : tiles) splits |= t > 1;
  if (used_order.empty() || !splits) return Sharding::Replicated();
  int64_t replication = 1;
  std::vector<int64_t> perm = used_order;
  for (int64_t a = 0; a < mesh.num_axes(); ++a) {
    if (used.contains(a)) continue;
    perm.push_back(a);
    replication *= mesh.AxisSize(a);
  }
  std::vector<int64_t> mesh_dims;
  for (const auto& a : mesh.axes()) mesh_dims.push_back(a.size);
  TileAssignment devices(mesh_dims, mesh.device_ids());
  TileAssignment permuted = devices.Transposed(perm);
  std::vector<int64_t> dims = tiles;
  if (replication > 1) dims.push_back(replication);
  TileAssignment reshaped = permuted.Reshaped(dims);
  if (replication > 1) return Sharding::PartialTile(std::move(reshaped));
  return Sharding::Tiled(std::move(reshaped));
}

absl::StatusOr<PartitionSpec> ToPartitionSpec(const Mesh& mesh, const Sharding& sharding,
                                              int64_t rank) {
  if (sharding.IsReplicated()) return PartitionSpec(std::vector<std::vector<std::string>>(rank));
  if (!sharding.IsTiled() || sharding.HasManualSubgroup()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sharding ", sharding.ToString(), " has no partition spec"));
  }
  // Assign axes to dims by search: mesh axes are few, so trying every
  // ordered assignment whose sizes multiply to each dim's tile count is cheap.
  std::vector<std::vector<std::string>> dims(static_cast<size_t>(rank));
  std::vector<bool> taken(static_cast<size_t>(mesh.num_axes()), false);
  std::function<bool(int64_t, int64_t)> assign = [&](int64_t d, int64_t remaining) -> bool {
    if (d == rank) {
      absl::StatusOr<Sharding> candidate = ToSharding(mesh, PartitionSpec(dims), rank);
      return candidate.ok() && *candidate == sharding;
    }
    if (remaining == 1) return assign(d + 1, d + 1 < rank ? sharding.TileCount(d + 1) : 1);
    for (int64_t a = 0; a < mesh.num_axes(); ++a) {
      if (taken[a] || remaining % mesh.AxisSize(a) != 0) continue;
      taken[a] = true;
      dims[d].push_back(mesh.axes()[a].name);
      if (assign(d, remaining / mesh.AxisSize(a))) return true;
      dims[d].pop_back();
      taken[a] = false;
    }
    return false;
  };
  if (rank > 0 && assign(0, sharding.TileCount(0))) return PartitionSpec(dims);
  return absl::InvalidArgumentError(absl::StrCat("sharding ", sharding.ToString(),
                                                 " cannot be written over mesh ", mesh.ToString()));
}

}  // namespace sharc::spmd
