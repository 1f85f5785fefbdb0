// Sharding rules, stated once per op in the way Shardy states them: every
// operand and result dimension maps to factors (einsum-like). dot
// [m,k]x[k,n]->[m,n] has factors m, k, n, and k is a reduction factor.
// Propagation (spmd/propagation) and the partitioner read the same rules, so
// the knowledge of how an op can be split lives here only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"

namespace sharc::spmd {

enum class FactorKind {
  kPassThrough,      // the same index on every tensor that has it (elementwise)
  kReduction,        // summed away: splitting it needs a cross-device reduction
  kNeedReplication,  // cannot be split (a dynamic-slice's sliced dim)
  kPermutation,      // carried but data moves along it (slice, pad, concat dims)
};

struct Factor {
  int64_t size = 1;
  FactorKind kind = FactorKind::kPassThrough;
};

// For each dimension of a tensor, the factors it is made of, major to minor.
// Reshapes give a dimension several factors; a dimension with no factor (an
// operand the rule ignores, such as a dynamic-slice index) is empty.
using DimFactors = std::vector<std::vector<int64_t>>;

struct ShardingRule {
  enum class Kind {
    kFactors,         // the factor mapping below describes the op
    kDataFlow,        // tuple, get-tuple-element, while, call, conditional:
                      // values flow to other values; propagation follows the edges
    kManualBoundary,  // SPMDFullToShardShape / SPMDShardToFullShape
    kReplicated,      // the op must see whole values (reason says why)
  };
  Kind kind = Kind::kFactors;
  std::vector<Factor> factors;
  std::vector<DimFactors> operands;  // one per operand
  std::vector<DimFactors> results;   // one per result leaf
  std::string reason;                // for kReplicated

  int64_t AddFactor(int64_t size, FactorKind kind) {
    factors.push_back(Factor{size, kind});
    return static_cast<int64_t>(factors.size()) - 1;
  }
  std::string ToString() const;  // "([i,k],[k,j])->([i,j]) {k:reduction}"
};

using ShardingRuleFn = std::function<absl::StatusOr<ShardingRule>(const hlo::Instruction&)>;

// The rule of `instruction` (built from its op's registered rule function).
absl::StatusOr<ShardingRule> GetShardingRule(const hlo::Instruction& instruction);
// True if the opcode has a registered rule (the completeness test uses it).
bool HasShardingRule(hlo::Opcode opcode);

// Family registration (one file per family under spmd/rules/).
class ShardingRuleRegistry {
 public:
  void Register(hlo::Opcode opcode, ShardingRuleFn fn);
  const ShardingRuleFn* Find(hlo::Opcode opcode) const;

 private:
  std::vector<ShardingRuleFn> rules_ = std::vector<ShardingRuleFn>(hlo::kNumOpcodes);
};

void RegisterElementwiseRules(ShardingRuleRegistry& registry);
void RegisterShapeRules(ShardingRuleRegistry& registry);
void RegisterReductionRules(ShardingRuleRegistry& registry);
void RegisterGatherScatterRules(ShardingRuleRegistry& registry);
void RegisterStructuralRules(ShardingRuleRegistry& registry);
void RegisterSortRules(ShardingRuleRegistry& registry);
void RegisterLinalgRules(ShardingRuleRegistry& registry);
void RegisterMapReduceRules(ShardingRuleRegistry& registry);
void RegisterShardMapRules(ShardingRuleRegistry& registry);

// Builders shared by the rule files.
// A rule where every operand and the result have the result's dims, one
// pass-through factor per dim (elementwise ops). Operands of lower rank
// (clamp's scalar bounds) get no factors.
ShardingRule PointwiseRule(const hlo::Instruction& instruction);
// Factors for reshaping `from` dims into `to` dims (compound factors).
void AddReshapeFactors(ShardingRule& rule, const std::vector<int64_t>& from,
                       const std::vector<int64_t>& to, DimFactors& from_factors,
                       DimFactors& to_factors);

}  // namespace sharc::spmd
