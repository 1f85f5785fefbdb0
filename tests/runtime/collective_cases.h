// The cases the collective tests share: device/group layouts (1-D, 2-D
// rows and columns, unsorted member orders; 1 to 8 devices), every dtype and
// the reducers defined on it, and the per-device module text of one
// collective. collectives_test.cc checks the in-process runtime against the
// interpreter on them; mpi/mpi_communicator_test.cc checks MPI runs against
// in-process runs on the same cases.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/ir/shape.h"

namespace sharc::runtime::collective_cases {

using hlo::PrimitiveType;

struct Layout {
  int64_t devices;
  std::vector<std::vector<int64_t>> groups;  // empty: one group of all devices
  int64_t group_size() const {
    return groups.empty() ? devices : static_cast<int64_t>(groups[0].size());
  }
  std::string ToString() const {
    std::vector<std::string> gs;
    for (const auto& g : groups) gs.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
    return absl::StrCat(devices, " devices, groups {", absl::StrJoin(gs, ","), "}");
  }
};

inline std::vector<Layout> Layouts() {
  return {
      {1, {}},
      {2, {}},
      {2, {{1, 0}}},
      {3, {}},
      {4, {}},
      {4, {{0, 1}, {2, 3}}},
      {4, {{0, 2}, {1, 3}}},
      {4, {{3, 1, 2, 0}}},
      {6, {{0, 1, 2}, {3, 4, 5}}},
      {6, {{0, 3}, {1, 4}, {2, 5}}},
      {8, {}},
      {8, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {8, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
  };
}

inline const std::vector<PrimitiveType>& Dtypes() {
  static const std::vector<PrimitiveType> types = {
      PrimitiveType::kPred, PrimitiveType::kS8,  PrimitiveType::kS16, PrimitiveType::kS32,
      PrimitiveType::kS64,  PrimitiveType::kU8,  PrimitiveType::kU16, PrimitiveType::kU32,
      PrimitiveType::kU64,  PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
      PrimitiveType::kF64};
  return types;
}

// Reducer ops defined on a dtype.
inline std::vector<std::string> ReducerOps(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return {"and", "or"};
  if (hlo::IsFloatingPoint(t)) return {"add", "maximum", "minimum", "multiply"};
  return {"add", "multiply", "maximum", "minimum", "and", "or"};
}

inline std::string ShapeText(PrimitiveType t, const std::vector<int64_t>& dims) {
  return hlo::Shape(t, dims).ToString();
}

inline std::string GroupsAttr(const Layout& layout) {
  if (layout.groups.empty()) return "";
  std::vector<std::string> gs;
  for (const auto& g : layout.groups) gs.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
  return absl::StrCat(", replica_groups={", absl::StrJoin(gs, ","), "}");
}

inline std::string ModuleText(const Layout& layout, PrimitiveType t, const std::vector<int64_t>& in,
                       const std::vector<int64_t>& out, const std::string& op_and_attrs,
                       const std::string& reducer_op) {
  std::string type = hlo::PrimitiveTypeName(t);
  std::string text = absl::StrCat("HloModule rt, num_partitions=", layout.devices, "\n\n");
  if (!reducer_op.empty()) {
    absl::StrAppend(&text, "%reducer {\n  %a = ", type, "[] parameter(0)\n  %b = ", type,
                    "[] parameter(1)\n  ROOT %r = ", type, "[] ", reducer_op, "(%a, %b)\n}\n\n");
  }
  absl::StrAppend(&text, "ENTRY %main {\n  %p = ", ShapeText(t, in), " parameter(0)\n  ROOT %c = ",
                  ShapeText(t, out), " ", op_and_attrs, "\n}\n");
  return text;
}

inline std::vector<int64_t> Scaled(std::vector<int64_t> dims, size_t dim, int64_t factor) {
  dims[dim] *= factor;
  return dims;
}

}  // namespace sharc::runtime::collective_cases
