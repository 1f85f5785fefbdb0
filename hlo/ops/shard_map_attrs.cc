#include "hlo/ops/shard_map_attrs.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/device_limits.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// A tiny scanner over the attribute text: names, integers and punctuation.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= text_.size();
  }
  bool TryChar(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  absl::Status ExpectChar(char c, std::string_view where) {
    if (TryChar(c)) return absl::OkStatus();
    return Error(absl::StrCat("expected '", std::string(1, c), "' ", std::string(where)));
  }
  absl::StatusOr<std::string> Name(std::string_view what) {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
            text_[pos_] == '.' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (start == pos_ || std::isdigit(static_cast<unsigned char>(text_[start]))) {
      pos_ = start;
      return Error(absl::StrCat("expected ", std::string(what)));
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  absl::StatusOr<int64_t> Int(std::string_view what) {
    SkipSpace();
    size_t start = pos_;
    int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      v = v * 10 + (text_[pos_] - '0');
      if (v > (int64_t{1} << 40)) return Error(absl::StrCat(std::string(what), " is too large"));
      ++pos_;
    }
    if (start == pos_) return Error(absl::StrCat("expected ", std::string(what)));
    return v;
  }
  absl::Status Error(std::string message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(message, " at offset ", pos_, " of '", std::string(text_), "'"));
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<AxisSpec> ParseOneSpec(Scanner& s) {
  ASSIGN_OR_RETURN(std::string p, s.Name("a partition spec P(...)"));
  if (p != "P") return s.Error(absl::StrCat("expected P(...), found '", p, "'"));
  RETURN_IF_ERROR(s.ExpectChar('(', "after P"));
  AxisSpec spec;
  if (s.TryChar(')')) return spec;
  do {
    if (s.TryChar('(')) {
      std::vector<std::string> axes;
      if (!s.TryChar(')')) {
        do {
          ASSIGN_OR_RETURN(std::string axis, s.Name("a mesh axis name"));
          // P((None)) would print as P(None), which means "not split".
          if (axis == "None" || axis == "_") {
            return s.Error(
                absl::StrCat("'", axis, "' cannot be in an axis tuple; write it alone, as in P(", axis, ")"));
          }
          axes.push_back(std::move(axis));
        } while (s.TryChar(','));
        RETURN_IF_ERROR(s.ExpectChar(')', "to close the axis tuple"));
      }
      spec.push_back(std::move(axes));
      continue;
    }
    ASSIGN_OR_RETURN(std::string axis, s.Name("a mesh axis name, None or (axes)"));
    if (axis == "None" || axis == "_") {
      spec.emplace_back();
    } else {
      spec.push_back({std::move(axis)});
    }
  } while (s.TryChar(','));
  RETURN_IF_ERROR(s.ExpectChar(')', "to close P("));
  return spec;
}

}  // namespace

absl::StatusOr<std::vector<MeshAxis>> ParseMeshText(std::string_view text) {
  Scanner s(text);
  std::vector<MeshAxis> mesh;
  if (s.AtEnd()) return s.Error("a mesh needs at least one axis");
  int64_t devices = 1;
  do {
    ASSIGN_OR_RETURN(std::string name, s.Name("a mesh axis name"));
    RETURN_IF_ERROR(s.ExpectChar('=', absl::StrCat("after mesh axis '", name, "'")));
    ASSIGN_OR_RETURN(int64_t size, s.Int(absl::StrCat("the size of mesh axis '", name, "'")));
    if (size < 1) return s.Error(absl::StrCat("mesh axis '", name, "' must have size >= 1"));
    // Bounding the product keeps every group size and device index in range.
    if (size > kMaxDevices / devices) {
      return s.Error(absl::StrCat("mesh has more than ", kMaxDevices, " devices"));
    }
    devices *= size;
    for (const MeshAxis& a : mesh) {
      if (a.name == name) return s.Error(absl::StrCat("mesh axis '", name, "' appears twice"));
    }
    mesh.push_back(MeshAxis{std::move(name), size});
  } while (s.TryChar(','));
  if (!s.AtEnd()) return s.Error("expected ',' or the end of the mesh");
  return mesh;
}

absl::StatusOr<std::vector<AxisSpec>> ParseSpecsText(std::string_view text) {
  Scanner s(text);
  std::vector<AxisSpec> specs;
  if (s.AtEnd()) return specs;
  do {
    ASSIGN_OR_RETURN(AxisSpec spec, ParseOneSpec(s));
    specs.push_back(std::move(spec));
  } while (s.TryChar(','));
  if (!s.AtEnd()) return s.Error("expected ',' or the end of the spec list");
  return specs;
}

absl::StatusOr<std::vector<std::string>> ParseAxesText(std::string_view text) {
  Scanner s(text);
  std::vector<std::string> axes;
  if (s.AtEnd()) return axes;
  do {
    ASSIGN_OR_RETURN(std::string axis, s.Name("a mesh axis name"));
    axes.push_back(std::move(axis));
  } while (s.TryChar(','));
  if (!s.AtEnd()) return s.Error("expected ',' or the end of the axis list");
  return axes;
}

std::string PrintMeshText(const std::vector<MeshAxis>& mesh) {
  std::vector<std::string> parts;
  for (const MeshAxis& a : mesh) parts.push_back(absl::StrCat(a.name, "=", a.size));
  return absl::StrJoin(parts, ", ");
}

std::string PrintSpecText(const AxisSpec& spec) {
  std::vector<std::string> parts;
  for (const std::vector<std::string>& dim : spec) {
    if (dim.empty()) {
      parts.push_back("None");
    } else if (dim.size() == 1) {
      parts.push_back(dim[0]);
    } else {
      parts.push_back(absl::StrCat("(", absl::StrJoin(dim, ","), ")"));
    }
  }
  return absl::StrCat("P(", absl::StrJoin(parts, ", "), ")");
}

std::string PrintSpecsText(const std::vector<AxisSpec>& specs) {
  std::vector<std::string> parts;
  for (const AxisSpec& spec : specs) parts.push_back(PrintSpecText(spec));
  return absl::StrJoin(parts, ", ");
}

std::string PrintAxesText(const std::vector<std::string>& axes) { return absl::StrJoin(axes, ","); }

// ------------------------------------------------------------ ManualMesh --

int64_t ManualMesh::num_devices() const {
  int64_t n = 1;
  for (const MeshAxis& a : axes_) n *= a.size;
  return n;
}

int64_t ManualMesh::AxisIndex(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (axes_[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

int64_t ManualMesh::AxisSize(std::string_view name) const {
  int64_t i = AxisIndex(name);
  return i < 0 ? 1 : axes_[static_cast<size_t>(i)].size;
}

int64_t ManualMesh::GroupSize(const std::vector<std::string>& names) const {
  int64_t n = 1;
  for (const std::string& name : names) n *= AxisSize(name);
  return n;
}

std::vector<int64_t> ManualMesh::Coordinates(int64_t device) const {
  std::vector<int64_t> coords(axes_.size());
  for (size_t i = axes_.size(); i-- > 0;) {
    coords[i] = device % axes_[i].size;
    device /= axes_[i].size;
  }
  return coords;
}

int64_t ManualMesh::Device(const std::vector<int64_t>& coordinates) const {
  int64_t d = 0;
  for (size_t i = 0; i < axes_.size(); ++i) d = d * axes_[i].size + coordinates[i];
  return d;
}

int64_t ManualMesh::GroupPosition(int64_t device, const std::vector<std::string>& names) const {
  std::vector<int64_t> coords = Coordinates(device);
  int64_t position = 0;
  for (const std::string& name : names) {
    int64_t i = AxisIndex(name);
    if (i < 0) continue;
    position = position * axes_[static_cast<size_t>(i)].size + coords[static_cast<size_t>(i)];
  }
  return position;
}

std::vector<int64_t> ManualMesh::GroupMembers(int64_t device,
                                              const std::vector<std::string>& names) const {
  std::vector<int64_t> base = Coordinates(device);
  const int64_t n = GroupSize(names);
  std::vector<int64_t> members;
  members.reserve(static_cast<size_t>(n));
  for (int64_t position = 0; position < n; ++position) {
    // Decode the position into coordinates on `names`, last name minor.
    std::vector<int64_t> coords = base;
    int64_t rest = position;
    for (size_t k = names.size(); k-- > 0;) {
      int64_t i = AxisIndex(names[k]);
      if (i < 0) continue;
      int64_t size = axes_[static_cast<size_t>(i)].size;
      coords[static_cast<size_t>(i)] = rest % size;
      rest /= size;
    }
    members.push_back(Device(coords));
  }
  return members;
}

std::vector<std::vector<int64_t>> ManualMesh::AllGroups(
    const std::vector<std::string>& names) const {
  std::vector<std::vector<int64_t>> groups;
  std::vector<bool> seen(static_cast<size_t>(num_devices()), false);
  for (int64_t d = 0; d < num_devices(); ++d) {
    if (seen[static_cast<size_t>(d)]) continue;
    std::vector<int64_t> members = GroupMembers(d, names);
    for (int64_t m : members) seen[static_cast<size_t>(m)] = true;
    groups.push_back(std::move(members));
  }
  return groups;
}

// ------------------------------------------------------- finding the mesh --

namespace {

absl::StatusOr<ManualMesh> HeaderMesh(const Computation* computation) {
  if (computation != nullptr && computation->parent() != nullptr &&
      !computation->parent()->config().mesh.empty()) {
    return ManualMesh(computation->parent()->config().mesh);
  }
  return absl::NotFoundError("no mesh");
}

// The instruction that calls `computation`, if any (bodies are called once).
const Instruction* CallerOf(const Computation* computation) {
  const Module* module = computation->parent();
  if (module == nullptr) return nullptr;
  for (const Computation* c : module->computations()) {
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (callee == computation) return inst;
      }
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<ManualMesh> ShardMapMesh(const Instruction& shard_map) {
  if (shard_map.has_attr("mesh")) {
    absl::StatusOr<std::vector<MeshAxis>> mesh = ParseMeshText(shard_map.attr_string("mesh"));
    if (!mesh.ok()) return OpError(shard_map, "has an invalid mesh: ", mesh.status().message());
    return ManualMesh(*std::move(mesh));
  }
  absl::StatusOr<ManualMesh> header = HeaderMesh(shard_map.parent());
  if (header.ok()) return header;
  return OpError(shard_map, "needs a mesh: write mesh={i=4, ...} on it or in the module header");
}

namespace {
thread_local std::vector<std::vector<MeshAxis>> tracing_meshes;
}  // namespace

TracingMeshScope::TracingMeshScope(std::vector<MeshAxis> mesh) {
  tracing_meshes.push_back(std::move(mesh));
}

TracingMeshScope::~TracingMeshScope() { tracing_meshes.pop_back(); }

absl::StatusOr<ManualMesh> EnclosingMesh(const Instruction& inst) {
  const Computation* computation = inst.parent();
  // Bounded walk up the callers (a malformed module could call in a cycle).
  for (int depth = 0; computation != nullptr && depth < 64; ++depth) {
    const Instruction* caller = CallerOf(computation);
    if (caller == nullptr) break;
    if (caller->opcode() == Opcode::kShardMap) return ShardMapMesh(*caller);
    computation = caller->parent();
  }
  absl::StatusOr<ManualMesh> header = HeaderMesh(inst.parent());
  if (header.ok()) return header;
  if (!tracing_meshes.empty()) return ManualMesh(tracing_meshes.back());
  return OpError(inst, "names mesh axes but is neither inside a shard_map body nor in a module "
                       "with a mesh={...} header");
}

absl::StatusOr<std::vector<AxisSpec>> ShardMapSpecs(const Instruction& shard_map,
                                                    std::string_view attr) {
  absl::StatusOr<std::vector<AxisSpec>> specs = ParseSpecsText(shard_map.attr_string(attr));
  if (!specs.ok()) {
    return OpError(shard_map, "has invalid ", attr, ": ", specs.status().message());
  }
  return specs;
}

absl::StatusOr<std::vector<std::string>> CollectiveAxes(const Instruction& inst,
                                                        const ManualMesh& mesh) {
  absl::StatusOr<std::vector<std::string>> axes = ParseAxesText(inst.attr_string("axes"));
  if (!axes.ok()) return OpError(inst, "has invalid axes: ", axes.status().message());
  if (axes->empty()) return OpError(inst, "needs at least one mesh axis in axes={...}");
  std::vector<std::string> names;
  for (const MeshAxis& a : mesh.axes()) names.push_back(a.name);
  for (size_t i = 0; i < axes->size(); ++i) {
    const std::string& axis = (*axes)[i];
    if (mesh.AxisIndex(axis) < 0) {
      return OpError(inst, "names axis '", axis, "', which is not in the mesh {",
                     absl::StrJoin(names, ", "), "}");
    }
    if (std::find(axes->begin(), axes->begin() + static_cast<int64_t>(i), axis) !=
        axes->begin() + static_cast<int64_t>(i)) {
      return OpError(inst, "names axis '", axis, "' twice");
    }
  }
  return axes;
}

std::vector<std::string> SpecAxes(const AxisSpec& spec, const ManualMesh& mesh) {
  std::vector<std::string> axes;
  for (const MeshAxis& a : mesh.axes()) {
    for (const std::vector<std::string>& dim : spec) {
      if (std::find(dim.begin(), dim.end(), a.name) != dim.end()) axes.push_back(a.name);
    }
  }
  return axes;
}

namespace {

absl::StatusOr<Shape> ScaleBySpec(const Shape& shape, const AxisSpec& spec,
                                  const ManualMesh& mesh, bool to_local) {
  if (!shape.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shard_map values must be arrays, got ", shape.ToString()));
  }
  if (static_cast<int64_t>(spec.size()) > shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("spec ", PrintSpecText(spec), " has ",
                                                   spec.size(), " entries for the rank-",
                                                   shape.rank(), " ", shape.ToString()));
  }
  std::vector<std::string> seen;
  Shape out = shape;
  for (size_t d = 0; d < spec.size(); ++d) {
    for (const std::string& axis : spec[d]) {
      if (mesh.AxisIndex(axis) < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "spec ", PrintSpecText(spec), " names axis '", axis, "', which is not in the mesh {",
            PrintMeshText(mesh.axes()), "}"));
      }
      if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("spec ", PrintSpecText(spec), " names axis '", axis, "' twice"));
      }
      seen.push_back(axis);
    }
    const int64_t n = mesh.GroupSize(spec[d]);
    int64_t& dim = out.mutable_dims()[d];
    if (to_local) {
      if (dim % n != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "dimension ", d, " of ", shape.ToString(), " has size ", dim,
            ", not divisible by the ", n, " devices of ", PrintSpecText(spec)));
      }
      dim /= n;
    } else {
      dim *= n;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Shape> LocalShape(const Shape& global, const AxisSpec& spec,
                                 const ManualMesh& mesh) {
  return ScaleBySpec(global, spec, mesh, true);
}

absl::StatusOr<Shape> GlobalShape(const Shape& local, const AxisSpec& spec,
                                  const ManualMesh& mesh) {
  return ScaleBySpec(local, spec, mesh, false);
}

}  // namespace sharc::hlo
