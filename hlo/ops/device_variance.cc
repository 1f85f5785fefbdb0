#include "hlo/ops/device_variance.h"

#include <algorithm>

namespace sharc::hlo {
namespace {

bool Contains(const VarianceAxes& axes, const std::string& a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

// Scalar computations nest shallowly; a deeper chain is a cycle the
// verifier reports, not something to recurse into forever.
constexpr int kMaxCallDepth = 64;

VarianceAxes SourcesIn(const Computation& computation, const ManualMesh& mesh, int depth) {
  VarianceAxes out;
  if (depth > kMaxCallDepth) return out;
  for (const Instruction* inst : computation.instructions()) {
    if (inst->opcode() == Opcode::kAxisIndex) {
      // Malformed axes (the verifier reports them) count as the whole mesh:
      // a wrong "varying" only costs a cast, a wrong "invariant" is unsound.
      absl::StatusOr<VarianceAxes> axes = CollectiveAxes(*inst, mesh);
      out = UnionAxes(mesh, out, axes.ok() ? *axes : AllAxes(mesh));
    } else if (inst->opcode() == Opcode::kPartitionId || inst->opcode() == Opcode::kReplicaId) {
      out = AllAxes(mesh);
    }
    for (const Computation* callee : inst->called_computations()) {
      out = UnionAxes(mesh, out, SourcesIn(*callee, mesh, depth + 1));
    }
  }
  return out;
}

}  // namespace

VarianceAxes UnionAxes(const ManualMesh& mesh, const VarianceAxes& a, const VarianceAxes& b) {
  VarianceAxes out;
  for (const MeshAxis& axis : mesh.axes()) {
    if (Contains(a, axis.name) || Contains(b, axis.name)) out.push_back(axis.name);
  }
  return out;
}

VarianceAxes MinusAxes(const VarianceAxes& a, const VarianceAxes& b) {
  VarianceAxes out;
  for (const std::string& x : a) {
    if (!Contains(b, x)) out.push_back(x);
  }
  return out;
}

VarianceAxes AllAxes(const ManualMesh& mesh) {
  VarianceAxes out;
  for (const MeshAxis& a : mesh.axes()) out.push_back(a.name);
  return out;
}

VarianceAxes CollectiveVariance(const NamedCollectiveInfo& info, const ManualMesh& mesh,
                                const VarianceAxes& operand, const VarianceAxes& axes) {
  switch (info.effect) {
    case VarianceEffect::kSource:
      return UnionAxes(mesh, axes, {});
    case VarianceEffect::kToInvariant:
      return MinusAxes(operand, axes);
    case VarianceEffect::kToVarying:
    case VarianceEffect::kVarying:
      break;
  }
  return UnionAxes(mesh, operand, axes);
}

VarianceAxes OwnVariance(const Instruction& inst, const ManualMesh& mesh) {
  if (inst.opcode() == Opcode::kPartitionId || inst.opcode() == Opcode::kReplicaId) {
    return AllAxes(mesh);
  }
  VarianceAxes out;
  for (const Computation* callee : inst.called_computations()) {
    out = UnionAxes(mesh, out, SourcesIn(*callee, mesh, 1));
  }
  return out;
}

}  // namespace sharc::hlo
