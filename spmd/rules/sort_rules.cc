// sort and bitcast-convert.
//
// sort: one factor per dimension shared by every operand and result; the
// sort dimension must be whole on each device (a row sorted in pieces is not
// sorted), the others pass through.
#include <algorithm>

#include "hlo/base/status_macros.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

absl::StatusOr<ShardingRule> SortRule(const Instruction& inst) {
  const hlo::Shape& shape = inst.operand(0)->shape();
  const hlo::IntList& sorted = inst.attr_ints("dimensions");
  if (sorted.size() != 1) {
    return absl::InvalidArgumentError("sort needs exactly one dimension, in " + inst.Describe());
  }
  ShardingRule rule;
  DimFactors dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const FactorKind kind = d == sorted[0] ? FactorKind::kNeedReplication : FactorKind::kPassThrough;
    dims.push_back({rule.AddFactor(shape.dim(d), kind)});
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    rule.operands.push_back(dims);
    rule.results.push_back(dims);
  }
  return rule;
}

// bitcast-convert: the dims it keeps pass through; the trailing dim it adds
// or removes (the bytes of one element) stays whole.
absl::StatusOr<ShardingRule> BitcastConvertRule(const Instruction& inst) {
  const hlo::Shape& in = inst.operand(0)->shape();
  const hlo::Shape& out = inst.shape();
  ShardingRule rule;
  DimFactors in_dims, out_dims;
  const int64_t common = std::min(in.rank(), out.rank());
  for (int64_t d = 0; d < common; ++d) {
    int64_t f = rule.AddFactor(in.dim(d), FactorKind::kPassThrough);
    in_dims.push_back({f});
    out_dims.push_back({f});
  }
  if (in.rank() > common) in_dims.push_back({rule.AddFactor(in.dim(common), FactorKind::kNeedReplication)});
  if (out.rank() > common) out_dims.push_back({rule.AddFactor(out.dim(common), FactorKind::kNeedReplication)});
  rule.operands.push_back(in_dims);
  rule.results.push_back(out_dims);
  return rule;
}

}  // namespace

void RegisterSortRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kSort, SortRule);
  registry.Register(Opcode::kBitcastConvert, BitcastConvertRule);
}

}  // namespace sharc::spmd
