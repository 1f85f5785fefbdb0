#include "hlo/analysis/device_variance_analysis.h"

#include <utility>

#include "hlo/analysis/data_flow_walk.h"
#include "hlo/base/status_macros.h"

namespace sharc::hlo {
namespace {

class VarianceLattice : public DataFlowLattice<LeafVariance> {
 public:
  explicit VarianceLattice(const ManualMesh& mesh) : mesh_(mesh) {}

  LeafVariance Bottom(const Shape& shape) const override { return LeafVariance(Count(shape)); }

  LeafVariance Join(const LeafVariance& a, const LeafVariance& b) const override {
    if (a.size() != b.size()) {
      const size_t n = std::max(a.size(), b.size());
      return LeafVariance(n, UnionAxes(mesh_, Union(a), Union(b)));
    }
    LeafVariance out;
    for (size_t k = 0; k < a.size(); ++k) out.push_back(UnionAxes(mesh_, a[k], b[k]));
    return out;
  }

  LeafVariance Tuple(std::vector<LeafVariance> elements) const override {
    LeafVariance out;
    for (const LeafVariance& element : elements) out.push_back(Union(element));
    return out;
  }

  LeafVariance Element(const LeafVariance& tuple, const Shape& shape, int64_t k) const override {
    const size_t i = static_cast<size_t>(k);
    return Fit({i < tuple.size() ? tuple[i] : Union(tuple)}, shape.tuple_shape(k));
  }

  // A varying predicate or branch index makes everything that flows vary.
  LeafVariance Control(const LeafVariance& value, const LeafVariance& control) const override {
    const VarianceAxes decides = Union(control);
    LeafVariance out;
    for (const VarianceAxes& leaf : value) out.push_back(UnionAxes(mesh_, leaf, decides));
    return out;
  }

  // A mismatch spreads the union over every element.
  LeafVariance Fit(LeafVariance value, const Shape& shape) const override {
    const size_t n = Count(shape);
    if (value.size() == n) return value;
    return LeafVariance(n, Union(value));
  }

  absl::StatusOr<LeafVariance> Transfer(const Instruction& inst,
                                        absl::Span<const LeafVariance* const> operands) override {
    if (const NamedCollectiveInfo* info = FindNamedCollective(inst.opcode())) {
      ASSIGN_OR_RETURN(VarianceAxes axes, CollectiveAxes(inst, mesh_));
      const VarianceAxes in = operands.empty() ? VarianceAxes{} : Union(*operands[0]);
      return Fit({CollectiveVariance(*info, mesh_, in, axes)}, inst.shape());
    }
    VarianceAxes joined = OwnVariance(inst, mesh_);
    for (const LeafVariance* op : operands) joined = UnionAxes(mesh_, joined, Union(*op));
    return Fit({joined}, inst.shape());
  }

 private:
  static size_t Count(const Shape& shape) {
    return shape.is_tuple() ? static_cast<size_t>(shape.tuple_size()) : 1;
  }
  VarianceAxes Union(const LeafVariance& leaves) const {
    VarianceAxes all;
    for (const VarianceAxes& a : leaves) all = UnionAxes(mesh_, all, a);
    return all;
  }

  const ManualMesh& mesh_;
};

}  // namespace

absl::StatusOr<DeviceVarianceAnalysis> DeviceVarianceAnalysis::Run(
    const Computation& body, const std::vector<LeafVariance>& params, const ManualMesh& mesh) {
  DeviceVarianceAnalysis out;
  out.mesh_ = mesh;
  VarianceLattice lattice(out.mesh_);
  DataFlowWalk<LeafVariance> walk(lattice);
  // Parameters' axes in mesh order, so that equal sets compare equal.
  std::vector<LeafVariance> normalized;
  for (const LeafVariance& param : params) {
    LeafVariance leaves;
    for (const VarianceAxes& leaf : param) leaves.push_back(UnionAxes(out.mesh_, leaf, {}));
    normalized.push_back(std::move(leaves));
  }
  RETURN_IF_ERROR(walk.Run(body, normalized));
  out.leaves_ = std::move(walk.mutable_values());
  return out;
}

VarianceAxes DeviceVarianceAnalysis::Of(const Instruction* value) const {
  VarianceAxes all;
  auto it = leaves_.find(value);
  if (it == leaves_.end()) return all;
  for (const VarianceAxes& a : it->second) all = UnionAxes(mesh_, all, a);
  return all;
}

const LeafVariance& DeviceVarianceAnalysis::Leaves(const Instruction* value) const {
  static const LeafVariance* kNone = new LeafVariance{VarianceAxes{}};
  auto it = leaves_.find(value);
  return it == leaves_.end() ? *kNone : it->second;
}

}  // namespace sharc::hlo
