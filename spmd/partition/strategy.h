// How to partition one op, decided from its factor rule (spmd/sharding_rule.h):
// an "iteration sharding" says how each factor of the op is split across the
// devices; it implies the sharding each operand must have (factors an operand
// lacks become replication) and how the local result is laid out. Split
// reduction factors leave partial results that an all-reduce over the
// devices along those factors completes.
//
// Candidates come from the result's sharding and from every operand's (and
// from merges of two); each is legalized so every tensor of the op can hold
// it exactly, and the one that moves the least data wins: first the fewest
// operands that need communication, then the fewest bytes. This is how a dot
// with both operands split on the contracting dim becomes a local dot plus an
// all-reduce, as in GSPMD, without a special case for dots.
#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

struct OpStrategy {
  // Over the factor space (one dim per factor, plus replication).
  hlo::Sharding iteration;
  // The sharding each operand must have before the local op.
  std::vector<hlo::Sharding> operand_targets;
  // Layout of the local result once split reduction factors are all-reduced.
  hlo::Sharding local_result;
  // Factors (dims of `iteration`) that are reduction factors and split.
  std::vector<int64_t> split_reduction_factors;
};

// `operand_shardings` are the shardings the operands' local values have now;
// `result_sharding` is the one the op's result must end with.
absl::StatusOr<OpStrategy> ChooseStrategy(const hlo::Instruction& inst, const ShardingRule& rule,
                                          const std::vector<hlo::Sharding>& operand_shardings,
                                          const hlo::Sharding& result_sharding);

}  // namespace sharc::spmd
