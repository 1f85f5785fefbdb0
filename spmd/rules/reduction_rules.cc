// Reductions and contractions: reduce, reduce-window, dot, and the
// collectives that reduce or regroup per-device values.
#include "spmd/sharding_rule.h"

#include <algorithm>

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// Inputs keep their dims; reduced dims are reduction factors. Every input
// of a variadic reduce shares the mapping; init values have no dims.
absl::StatusOr<ShardingRule> ReduceRule(const Instruction& inst) {
  ShardingRule rule;
  const int64_t n = inst.operand_count() / 2;
  const hlo::Shape& in = inst.operand(0)->shape();
  const std::vector<int64_t>& reduced = inst.attr_ints("dimensions");
  DimFactors input, output;
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    int64_t f = rule.AddFactor(in.dim(d), is_reduced ? FactorKind::kReduction
                                                     : FactorKind::kPassThrough);
    input.push_back({f});
    if (!is_reduced) output.push_back({f});
  }
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(input);
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(DimFactors(0));
  for (int64_t i = 0; i < n; ++i) rule.results.push_back(output);
  return rule;
}

// Dims with a real window move data between neighbours (a halo exchange when
// split); dims with a unit window are pointwise.
absl::StatusOr<ShardingRule> ReduceWindowRule(const Instruction& inst) {
  ShardingRule rule;
  const int64_t n = inst.operand_count() / 2;
  const hlo::IntListList& window = inst.attr_int_lists("window");
  DimFactors dims;
  for (int64_t d = 0; d < inst.operand(0)->shape().rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    bool trivial = w.size() >= 6 && w[0] == 1 && w[1] == 1 && w[2] == 0 && w[3] == 0 &&
                   w[4] == 1 && w[5] == 1;
    int64_t out_size =
        inst.shape().is_array() ? inst.shape().dim(d) : inst.shape().tuple_shape(0).dim(d);
    dims.push_back({rule.AddFactor(out_size, trivial ? FactorKind::kPassThrough
                                                     : FactorKind::kPermutation)});
  }
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(dims);
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(DimFactors(0));
  for (int64_t i = 0; i < n; ++i) rule.results.push_back(dims);
  return rule;
}

absl::StatusOr<ShardingRule> DotRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  const auto& lb = inst.attr_ints("lhs_batch_dims");
  const auto& rb = inst.attr_ints("rhs_batch_dims");
  const auto& lc = inst.attr_ints("lhs_contracting_dims");
  const auto& rc = inst.attr_ints("rhs_contracting_dims");
  DimFactors l(lhs.rank()), r(rhs.rank()), out;
  for (size_t i = 0; i < lb.size(); ++i) {
    int64_t f = rule.AddFactor(lhs.dim(lb[i]), FactorKind::kPassThrough);
    l[lb[i]] = {f};
    r[rb[i]] = {f};
    out.push_back({f});
  }
  auto is_listed = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (is_listed(lb, d) || is_listed(lc, d)) continue;
    int64_t f = rule.AddFactor(lhs.dim(d), FactorKind::kPassThrough);
    l[d] = {f};
    out.push_back({f});
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (is_listed(rb, d) || is_listed(rc, d)) continue;
    int64_t f = rule.AddFactor(rhs.dim(d), FactorKind::kPassThrough);
    r[d] = {f};
    out.push_back({f});
  }
  // Contracting factors last, so the rule reads ([i,k],[k,j])->([i,j]).
  for (size_t i = 0; i < lc.size(); ++i) {
    int64_t f = rule.AddFactor(lhs.dim(lc[i]), FactorKind::kReduction);
    l[lc[i]] = {f};
    r[rc[i]] = {f};
  }
  rule.operands = {l, r};
  rule.results = {out};
  return rule;
}

ShardingRule ReplicatedRule(std::string reason) {
  ShardingRule rule;
  rule.kind = ShardingRule::Kind::kReplicated;
  rule.reason = std::move(reason);
  return rule;
}

}  // namespace

void RegisterReductionRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kReduce, ReduceRule);
  registry.Register(Opcode::kReduceWindow, ReduceWindowRule);
  registry.Register(Opcode::kDot, DotRule);
  // Collectives other than all-reduce change shapes by the group size: they
  // only appear in per-device programs, after partitioning.
  for (Opcode op : {Opcode::kAllGather, Opcode::kReduceScatter, Opcode::kAllToAll,
                    Opcode::kCollectivePermute}) {
    registry.Register(op, [](const Instruction&) -> absl::StatusOr<ShardingRule> {
      return ReplicatedRule("a collective of a per-device program; it is not partitioned again");
    });
  }
}

}  // namespace sharc::spmd
