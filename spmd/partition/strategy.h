// How to partition one op, decided from its factor rule (spmd/sharding_rule.h):
// an "iteration sharding" says how each factor of the op is split across the
// devices; it implies the sharding each operand must have (factors an operand
// lacks become replication) and how the local result is laid out. Split
// reduction factors leave partial results that an all-reduce over the
// devices along those factors completes.
//
// Candidates come from the result's sharding and from every operand's (and
// from merges of two); each is legalized so every tensor of the op can hold
// it exactly, and costed by the bytes one device sends to carry it out: the
// reshards of its operands (planned as reshard.h would, each collective
// costed as the cost report counts it), the all-reduce or reduce-scatter
// completing split reductions, and the reshard of the result to its own
// sharding.
//
// A plan that splits the op and takes every operand as it is (no reshard,
// not even a local slice) comes first, unless a plan whose operands only
// slice locally what they hold sends fewer bytes (it splits the op further
// for free); for a dot, then, a plan that gives
// the result its sharding (or one it slices locally) before one that moves
// the result afterwards (GSPMD's dot handler reshards operands to fit the
// result: with both operands split on batch and rows and the result like
// the lhs, it gathers the rhs's rows rather than the smaller lhs's and an
// all-to-all of the result); among such plans, and among the others, the
// fewest bytes win; a tie keeps the earlier candidate (the
// result's sharding first, as GSPMD partitions toward the result). The first
// rule is the order of GSPMD's dot handler, which tries operands already
// partitioned compatibly before resharding any: operands split alike on the
// contracting dims give a local dot and a reduce-scatter even where
// gathering an operand would send fewer bytes (XLA's answer on the shared
// conformance case 04), and a kernel split on its output features keeps the
// convolution split instead of being gathered to run it whole. Running the
// op whole on replicated operands is not such a plan: a replicated operand
// sliced to a split result costs nothing and saves the work. So:
//   - lhs f32[128,64] and rhs f32[64,256] both split 8 ways on the
//     contracting dim, result split on columns: local dot, one
//     reduce-scatter;
//   - lhs f32[64,32] split 8 ways on its contracting dim, rhs replicated,
//     result split on rows: no plan takes both as they are (the contracting
//     split slices rhs), so bytes decide: the lhs's split moves to its rows
//     with one all-to-all (896 B per device) instead of a reduce-scatter of
//     the f32[64,16] partial product (3584 B), as in GSPMD.
#pragma once

#include <optional>
#include <string>
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
  // When the result's own sharding splits one dim exactly across the
  // reduction groups (member i keeping block i): that dim, and one
  // reduce-scatter completes the partial results instead of an all-reduce
  // and a slice.
  std::optional<int64_t> scatter_dim;
  // Bytes one device sends to carry this strategy out.
  int64_t bytes_sent = 0;
};

// What ChooseStrategy weighed, for `sharc partition --explain`.
struct StrategyCandidate {
  hlo::Sharding iteration;
  // One line per data movement, e.g. "lhs: {devices=[1,8]...} -> ...:
  // all-to-all, 896 B".
  std::vector<std::string> moves;
  int64_t bytes_sent = 0;
  bool takes_operands_as_they_are = false;
};
struct StrategyExplanation {
  std::vector<StrategyCandidate> candidates;
  size_t chosen = 0;
  // The chosen plan only slices its operands locally and replaced a cheaper-
  // ranked plan taking them as they are because it sends fewer bytes.
  bool sliced_locally = false;
  // A readable account: every candidate with its moves and bytes, and why
  // the chosen one won.
  std::string ToText(const hlo::Instruction& inst) const;
};

// `operand_shardings` are the shardings the operands' local values have now;
// `result_sharding` is the one the op's result must end with.
absl::StatusOr<OpStrategy> ChooseStrategy(const hlo::Instruction& inst, const ShardingRule& rule,
                                          const std::vector<hlo::Sharding>& operand_shardings,
                                          const hlo::Sharding& result_sharding,
                                          StrategyExplanation* explanation = nullptr);

// A scatter whose updates may be split along their scatter dims (each
// device scatters its own updates, and the results are all-reduced with the
// combiner): one operand, numeric, combined by add, max or min. Under add
// the other devices of a group start from -0 instead of the operand
// (localize.cc), so the sum counts it once.
std::optional<hlo::Opcode> SplitScatterCombiner(const hlo::Instruction& inst);

// Bytes one device sends to take an array or tuple value of `shape` from
// `from` to `to` along the plan PlanReshard (reshard.h) makes, each step
// costed as the cost report counts its collective; `steps`, if given,
// receives one description per collective.
int64_t ReshardBytesSent(const hlo::Shape& shape, const hlo::Sharding& from,
                         const hlo::Sharding& to, std::vector<std::string>* steps = nullptr);

}  // namespace sharc::spmd
