// The algebra of device variance (DESIGN.md, "shard_map and device
// variance"): what one op does to the set of axes a value varies over. The
// one analysis of shard_map bodies (hlo/analysis/device_variance_analysis.h)
// applies it to ops that compute their result; spmd's variance pass and
// autodiff's BodyVariance both read that analysis.
//
// A variance is the set of mesh axes along which a value may differ between
// devices, kept in the mesh's axis order so that equal sets compare (and
// print) equal.
#pragma once

#include <string>
#include <vector>

#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"
#include "hlo/ops/named_collectives.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::hlo {

using VarianceAxes = std::vector<std::string>;

// a ∪ b in mesh order (names not in the mesh are dropped).
VarianceAxes UnionAxes(const ManualMesh& mesh, const VarianceAxes& a, const VarianceAxes& b);
// a \ b, in a's order.
VarianceAxes MinusAxes(const VarianceAxes& a, const VarianceAxes& b);
// Every axis of the mesh.
VarianceAxes AllAxes(const ManualMesh& mesh);

// A named collective's result variance, from its operand's (`operand`, empty
// for axis_index) and the axes it names (named_collectives.h's effect).
VarianceAxes CollectiveVariance(const NamedCollectiveInfo& info, const ManualMesh& mesh,
                                const VarianceAxes& operand, const VarianceAxes& axes);

// The axes along which any other instruction makes its result vary beyond
// its operands': partition-id and replica-id vary over the whole mesh, and a
// called scalar computation (a reducer, a sort comparator) over whatever
// axis_index or partition-id inside it (or its callees) names. The result
// of such an op is the union of its operands' variance and this.
VarianceAxes OwnVariance(const Instruction& inst, const ManualMesh& mesh);

}  // namespace sharc::hlo
