#include "spmd/sharding_rule.h"

#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

void ShardingRuleRegistry::Register(Opcode opcode, ShardingRuleFn fn) {
  rules_[static_cast<size_t>(opcode)] = std::move(fn);
}

const ShardingRuleFn* ShardingRuleRegistry::Find(Opcode opcode) const {
  const ShardingRuleFn& fn = rules_[static_cast<size_t>(opcode)];
  return fn ? &fn : nullptr;
}

namespace {
const ShardingRuleRegistry& Registry() {
  static const ShardingRuleRegistry* registry = [] {
    auto* r = new ShardingRuleRegistry();
    RegisterElementwiseRules(*r);
    RegisterShapeRules(*r);
    RegisterReductionRules(*r);
    RegisterGatherScatterRules(*r);
    RegisterStructuralRules(*r);
    RegisterSortRules(*r);
    RegisterLinalgRules(*r);
    RegisterMapReduceRules(*r);
    RegisterShardMapRules(*r);
    return r;
  }();
  return *registry;
}

std::string FactorName(int64_t f) {
  // i, j, k, ... z, then f18, f19, ...
  if (f < 18) return std::string(1, static_cast<char>('i' + f));
  return absl::StrCat("f", f);
}

std::string DimsToString(const DimFactors& dims) {
  std::vector<std::string> parts;
  for (const auto& factors : dims) {
    std::vector<std::string> names;
    for (int64_t f : factors) names.push_back(FactorName(f));
    parts.push_back(names.empty() ? "_" : absl::StrJoin(names, ""));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}
}  // namespace

std::string ShardingRule::ToString() const {
  switch (kind) {
    case Kind::kDataFlow:
      return "data-flow";
    case Kind::kManualBoundary:
      return "manual-boundary";
    case Kind::kReplicated:
      return absl::StrCat("replicated (", reason, ")");
    case Kind::kFactors:
      break;
  }
  std::vector<std::string> ops, res, special;
  for (const DimFactors& d : operands) ops.push_back(DimsToString(d));
  for (const DimFactors& d : results) res.push_back(DimsToString(d));
  for (size_t f = 0; f < factors.size(); ++f) {
    switch (factors[f].kind) {
      case FactorKind::kReduction:
        special.push_back(absl::StrCat(FactorName(f), ":reduction"));
        break;
      case FactorKind::kNeedReplication:
        special.push_back(absl::StrCat(FactorName(f), ":need-replication"));
        break;
      case FactorKind::kPermutation:
        special.push_back(absl::StrCat(FactorName(f), ":permutation"));
        break;
      case FactorKind::kPassThrough:
        break;
    }
  }
  std::string out = absl::StrCat("(", absl::StrJoin(ops, ","), ")->(", absl::StrJoin(res, ","), ")");
  if (!special.empty()) absl::StrAppend(&out, " {", absl::StrJoin(special, ", "), "}");
  return out;
}

bool HasShardingRule(Opcode opcode) { return Registry().Find(opcode) != nullptr; }

absl::StatusOr<ShardingRule> GetShardingRule(const Instruction& instruction) {
  const ShardingRuleFn* fn = Registry().Find(instruction.opcode());
  if (fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat("op '", hlo::OpcodeName(instruction.opcode()),
                                                 "' has no sharding rule, in ",
                                                 instruction.Describe()));
  }
  return (*fn)(instruction);
}

ShardingRule PointwiseRule(const Instruction& instruction) {
  ShardingRule rule;
  const hlo::Shape& shape = instruction.shape();
  DimFactors dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    dims.push_back({rule.AddFactor(shape.dim(d), FactorKind::kPassThrough)});
  }
  for (const Instruction* op : instruction.operands()) {
    if (op->shape().is_array() && op->shape().rank() == shape.rank()) {
      rule.operands.push_back(dims);
    } else {
      rule.operands.push_back(DimFactors(op->shape().is_array() ? op->shape().rank() : 0));
    }
  }
  rule.results.push_back(dims);
  return rule;
}

void AddReshapeFactors(ShardingRule& rule, const std::vector<int64_t>& from,
                       const std::vector<int64_t>& to, DimFactors& from_factors,
                       DimFactors& to_factors) {
  from_factors.assign(from.size(), {});
  to_factors.assign(to.size(), {});
  size_t i = 0, j = 0;
  int64_t a = 0, b = 0;  // what is left of from[i] and to[j]
  auto next_from = [&] {
    while (i < from.size() && from[i] == 1) ++i;
    a = i < from.size() ? from[i] : 1;
  };
  auto next_to = [&] {
    while (j < to.size() && to[j] == 1) ++j;
    b = j < to.size() ? to[j] : 1;
  };
  next_from();
  next_to();
  while (i < from.size() && j < to.size()) {
    int64_t g = std::gcd(a, b);
    if (g == 1) {
      // The remaining dims do not line up (e.g. [6,2] -> [4,3]): they get
      // factors that cannot be split, one per side.
      for (; i < from.size(); ++i)
        if (from[i] > 1) from_factors[i].push_back(rule.AddFactor(from[i], FactorKind::kNeedReplication));
      for (; j < to.size(); ++j)
        if (to[j] > 1) to_factors[j].push_back(rule.AddFactor(to[j], FactorKind::kNeedReplication));
      return;
    }
    int64_t f = rule.AddFactor(g, FactorKind::kPassThrough);
    from_factors[i].push_back(f);
    to_factors[j].push_back(f);
    a /= g;
    b /= g;
    if (a == 1) {
      ++i;
      next_from();
    }
    if (b == 1) {
      ++j;
      next_to();
    }
  }
}

}  // namespace sharc::spmd
