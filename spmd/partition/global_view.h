// Building and reading the partitioner's global-view instructions
// (hlo/ops/spmd_global_view.h) in a global module between its passes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/spmd_global_view.h"

namespace sharc::spmd {

using hlo::IsCustomCallTo;

// A name not yet used in `comp`, derived from `base`.
std::string FreshGlobalName(const hlo::Computation& comp, const std::string& base);

// Appends `target`(operand) with the given result sharding.
hlo::Instruction* AddGlobalView(hlo::Computation& comp, std::string_view target,
                                hlo::Instruction* operand, const hlo::Sharding& sharding,
                                const std::string& name);

// Replica groups of kSpmdAllReduce / kSpmdReduceScatter travel in
// backend_config, written as in XLA's text: {{0,1},{2,3}}.
std::string FormatReplicaGroups(const std::vector<std::vector<int64_t>>& groups);
absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroupsOf(const hlo::Instruction& inst);

}  // namespace sharc::spmd
