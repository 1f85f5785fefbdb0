// Module plumbing the partitioner's passes share: which computations are
// control-flow bodies (rewritten with their caller) and which are scalar
// helpers (reducers, comparators: copied unchanged into the new module).
#pragma once

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

using ComputationMap = absl::flat_hash_map<const hlo::Computation*, hlo::Computation*>;

// Copies a computation unchanged, pointing its callees at `mapped` copies.
hlo::Computation* CopyComputation(const hlo::Computation& comp, hlo::Module& into,
                                  const ComputationMap& mapped);

// Copies into `into` every scalar helper of the program: the computations
// that ops other than while/call/conditional apply in the entry or its
// control-flow bodies (reducers, comparators, combiners), and whatever those
// call; returns old -> new.
ComputationMap CopyScalarComputations(const hlo::Module& module, hlo::Module& into);

// Clones `inst` (hlo::CloneWithOperands) with new operands, shape and name
// and no sharding; attribute computations go through `mapped` (unmapped ones
// are kept: control-flow callees, which the caller sets afterwards).
std::unique_ptr<hlo::Instruction> CloneWith(const hlo::Instruction& inst,
                                            const std::vector<hlo::Instruction*>& operands,
                                            const hlo::Shape& shape, const std::string& name,
                                            const ComputationMap& mapped);

// Points a control-flow instruction's callee attribute at `callees`.
void SetCallees(hlo::Instruction* inst, const std::string& attr,
                std::vector<hlo::Computation*> callees);
// Points a conditional at `branches`, in the form `original` was written
// (branch_computations, or true/false computations).
void SetBranches(hlo::Instruction* conditional, const hlo::Instruction& original,
                 std::vector<hlo::Computation*> branches);

}  // namespace sharc::spmd
