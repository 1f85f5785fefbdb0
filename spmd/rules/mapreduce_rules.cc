// The MapReduce blocks. The lowering (spmd/mapreduce_lowering.h) replaces
// them before propagation runs, so these rules serve tools that look at an
// unlowered module (cost estimates, `sharc propagate` of the blocks): the
// group dimension is a factor like any other, and summing it away is a
// reduction.
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// broadcast: x[d...] -> [g, d...]; g exists only on the result.
absl::StatusOr<ShardingRule> BroadcastToGroupsRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& out = inst.shape();
  DimFactors operand, result;
  result.push_back({rule.AddFactor(out.dim(0), FactorKind::kPassThrough)});
  for (int64_t d = 1; d < out.rank(); ++d) {
    int64_t f = rule.AddFactor(out.dim(d), FactorKind::kPassThrough);
    operand.push_back({f});
    result.push_back({f});
  }
  rule.operands.push_back(operand);
  rule.results.push_back(result);
  return rule;
}

// sum, mean: [g, d...] -> [d...]; g is summed away.
absl::StatusOr<ShardingRule> GroupReductionRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& in = inst.operand(0)->shape();
  DimFactors operand, result;
  operand.push_back({rule.AddFactor(in.dim(0), FactorKind::kReduction)});
  for (int64_t d = 1; d < in.rank(); ++d) {
    int64_t f = rule.AddFactor(in.dim(d), FactorKind::kPassThrough);
    operand.push_back({f});
    result.push_back({f});
  }
  rule.operands.push_back(operand);
  rule.results.push_back(result);
  return rule;
}

// map: the group dimension runs through every operand and result leaf; what
// f does inside a group is only known once it is vectorised by the lowering.
absl::StatusOr<ShardingRule> MapRule(const Instruction& inst) {
  ShardingRule rule;
  const int64_t g = rule.AddFactor(inst.operand(0)->shape().dim(0), FactorKind::kPassThrough);
  auto leading_only = [g](const hlo::Shape& shape) {
    DimFactors dims(static_cast<size_t>(shape.rank()));
    dims[0] = {g};
    return dims;
  };
  for (const Instruction* operand : inst.operands()) {
    rule.operands.push_back(leading_only(operand->shape()));
  }
  if (inst.shape().is_tuple()) {
    for (const hlo::Shape& leaf : inst.shape().tuple_shapes()) {
      rule.results.push_back(leading_only(leaf));
    }
  } else {
    rule.results.push_back(leading_only(inst.shape()));
  }
  return rule;
}

}  // namespace

void RegisterMapReduceRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kMapReduceBroadcast, BroadcastToGroupsRule);
  registry.Register(Opcode::kMapReduceSum, GroupReductionRule);
  registry.Register(Opcode::kMapReduceMean, GroupReductionRule);
  registry.Register(Opcode::kMapReduceMap, MapRule);
}

}  // namespace sharc::spmd
