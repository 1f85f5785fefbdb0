#include "frontend/named_collectives.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/creation.h"
#include "frontend/elementwise.h"
#include "frontend/shard_map.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::frontend {
namespace {

std::string Braced(const AxisNames& axes) {
  return absl::StrCat("{", absl::StrJoin(axes.names(), ","), "}");
}

// The enclosing shard_map's mesh; a collective outside any body, or naming
// an axis that mesh lacks, is an error at the user's line (before the op
// table would report it with less context).
const spmd::Mesh& BodyMesh(const char* op, const AxisNames& axes, const Loc& loc) {
  const spmd::Mesh* mesh = ActiveShardMapMesh();
  if (mesh == nullptr) {
    ThrowTraceError(loc, absl::StrCat(op, " over ", Braced(axes),
                                      " is only defined inside the function of a shard_map: "
                                      "named mesh axes exist only there"));
  }
  if (axes.names().empty()) ThrowTraceError(loc, absl::StrCat(op, " needs at least one mesh axis"));
  for (const std::string& axis : axes.names()) {
    if (!mesh->AxisIndex(axis).has_value()) {
      ThrowTraceError(loc, absl::StrCat(op, " names axis '", axis,
                                        "', which is not in the shard_map's mesh ",
                                        mesh->ToString()));
    }
  }
  return *mesh;
}

Tensor Named(hlo::Opcode opcode, const char* op, const Tensor& x, const AxisNames& axes,
             std::vector<hlo::Attribute> extra, const Loc& loc) {
  BodyMesh(op, axes, loc);
  std::vector<hlo::Attribute> attributes = {{"axes", hlo::PrintAxesText(axes.names())}};
  for (hlo::Attribute& a : extra) attributes.push_back(std::move(a));
  return Emit(opcode, {x}, std::move(attributes), std::nullopt, loc);
}

std::vector<hlo::Attribute> Blocks(int64_t dimension, bool tiled) {
  return {{"dimension", dimension}, {"tiled", tiled}};
}

}  // namespace

int64_t axis_size(const AxisNames& axes, Loc loc) {
  const spmd::Mesh& mesh = BodyMesh("axis_size", axes, loc);
  return hlo::ManualMesh(mesh.axes()).GroupSize(axes.names());
}

Tensor psum(const Tensor& x, const AxisNames& axes, Loc loc) {
  return Named(hlo::Opcode::kPSum, "psum", x, axes, {}, loc);
}

Tree psum(const Tree& x, const AxisNames& axes, Loc loc) {
  return MapTree(x, [&](const Tensor& t) { return psum(t, axes, loc); });
}

Tensor pmean(const Tensor& x, const AxisNames& axes, Loc loc) {
  const int64_t n = axis_size(axes, loc);
  return divide(psum(x, axes, loc), full({}, static_cast<double>(n), x.dtype(), loc), loc);
}

Tree pmean(const Tree& x, const AxisNames& axes, Loc loc) {
  return MapTree(x, [&](const Tensor& t) { return pmean(t, axes, loc); });
}

Tensor pmax(const Tensor& x, const AxisNames& axes, Loc loc) {
  return Named(hlo::Opcode::kPMax, "pmax", x, axes, {}, loc);
}

Tensor pmin(const Tensor& x, const AxisNames& axes, Loc loc) {
  return Named(hlo::Opcode::kPMin, "pmin", x, axes, {}, loc);
}

Tensor pbroadcast(const Tensor& x, const AxisNames& axes, Loc loc) {
  return Named(hlo::Opcode::kPBroadcast, "pbroadcast", x, axes, {}, loc);
}

Tensor all_gather(const Tensor& x, const AxisNames& axes, int64_t dimension, bool tiled,
                  Loc loc) {
  return Named(hlo::Opcode::kNamedAllGather, "all_gather", x, axes, Blocks(dimension, tiled), loc);
}

Tensor all_gather_invariant(const Tensor& x, const AxisNames& axes, int64_t dimension,
                            bool tiled, Loc loc) {
  return Named(hlo::Opcode::kNamedAllGatherInvariant, "all_gather_invariant", x, axes,
               Blocks(dimension, tiled), loc);
}

Tensor psum_scatter(const Tensor& x, const AxisNames& axes, int64_t dimension, bool tiled,
                    Loc loc) {
  return Named(hlo::Opcode::kPSumScatter, "psum_scatter", x, axes, Blocks(dimension, tiled), loc);
}

Tensor pscatter(const Tensor& x, const AxisNames& axes, int64_t dimension, bool tiled, Loc loc) {
  return Named(hlo::Opcode::kPScatter, "pscatter", x, axes, Blocks(dimension, tiled), loc);
}

Tensor all_to_all(const Tensor& x, const AxisNames& axes, int64_t split_dimension,
                  int64_t concat_dimension, bool tiled, Loc loc) {
  if (!tiled) {
    ThrowTraceError(loc, "all_to_all: only tiled=true is supported (the split dimension keeps "
                         "its rank); reshape to add or drop the group dimension");
  }
  return Named(hlo::Opcode::kNamedAllToAll, "all_to_all", x, axes,
               {{"split_dimension", split_dimension},
                {"concat_dimension", concat_dimension},
                {"tiled", true}},
               loc);
}

Tensor ppermute(const Tensor& x, const AxisNames& axes,
                std::vector<std::pair<int64_t, int64_t>> pairs, Loc loc) {
  hlo::IntListList listed;
  for (const auto& [source, destination] : pairs) listed.push_back({source, destination});
  return Named(hlo::Opcode::kPPermute, "ppermute", x, axes, {{"pairs", std::move(listed)}}, loc);
}

Tensor axis_index(const AxisNames& axes, Loc loc) {
  BodyMesh("axis_index", axes, loc);
  return Emit(hlo::Opcode::kAxisIndex, {}, {{"axes", hlo::PrintAxesText(axes.names())}},
              std::nullopt, loc);
}

}  // namespace sharc::frontend
