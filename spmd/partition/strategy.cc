#include "spmd/partition/strategy.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "spmd/sharding_projection.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Shape;
using hlo::Sharding;

namespace {

DimFactors FactorSpace(const ShardingRule& rule) {
  DimFactors dims;
  for (size_t f = 0; f < rule.factors.size(); ++f) dims.push_back({static_cast<int64_t>(f)});
  return dims;
}

bool HasFactors(const DimFactors& dims) {
  for (const auto& d : dims)
    if (!d.empty()) return true;
  return false;
}

// Factors the local op cannot split: need-replication ones, permutation ones
// (slicing, padding or concatenating along a split dim would need halos), and
// reduction factors whose partial results no elementwise all-reduce can
// combine (variadic reduces, scatter updates).
std::vector<int64_t> UnsplittableFactors(const Instruction& inst, const ShardingRule& rule) {
  std::vector<int64_t> out;
  const bool combinable = inst.opcode() == hlo::Opcode::kDot ||
                          inst.opcode() == hlo::Opcode::kConvolution ||
                          (inst.opcode() == hlo::Opcode::kReduce && inst.operand_count() == 2);
  for (size_t f = 0; f < rule.factors.size(); ++f) {
    FactorKind kind = rule.factors[f].kind;
    if (kind == FactorKind::kNeedReplication || kind == FactorKind::kPermutation ||
        (kind == FactorKind::kReduction && !combinable)) {
      out.push_back(static_cast<int64_t>(f));
    }
  }
  return out;
}

std::optional<Sharding> ToFactors(const Sharding& s, const DimFactors& dims,
                                  const ShardingRule& rule) {
  return ProjectSharding(s, dims, FactorSpace(rule), rule);
}

// Drops splits some tensor of the op cannot hold exactly, until every
// projection round-trips.
Sharding Legalize(Sharding iteration, const Instruction& inst, const ShardingRule& rule) {
  if (!iteration.IsTiled()) return iteration;
  const DimFactors space = FactorSpace(rule);
  std::vector<int64_t> bad = UnsplittableFactors(inst, rule);
  for (int round = 0; round < 8; ++round) {
    if (!bad.empty()) iteration = ReplicateDims(iteration, bad);
    if (!iteration.IsTiled()) return iteration;
    bad.clear();
    std::vector<int64_t> counts = FactorTileCounts(iteration, space, rule);
    std::vector<const DimFactors*> tensors;
    for (const DimFactors& d : rule.operands) tensors.push_back(&d);
    for (const DimFactors& d : rule.results) tensors.push_back(&d);
    for (const DimFactors* t : tensors) {
      if (!HasFactors(*t)) continue;
      std::optional<Sharding> on_tensor = ProjectSharding(iteration, space, *t, rule);
      if (!on_tensor) continue;
      std::vector<int64_t> back = FactorTileCounts(*on_tensor, *t, rule);
      for (size_t f = 0; f < counts.size(); ++f) {
        bool present = false;
        for (const auto& dim : *t)
          for (int64_t id : dim) present |= id == static_cast<int64_t>(f);
        if (present && back[f] != counts[f] &&
            std::find(bad.begin(), bad.end(), static_cast<int64_t>(f)) == bad.end()) {
          bad.push_back(static_cast<int64_t>(f));
        }
      }
    }
    if (bad.empty()) return iteration;
  }
  return Sharding::Replicated();
}

Sharding Project(const Sharding& iteration, const DimFactors& to, const ShardingRule& rule) {
  if (!HasFactors(to)) return Sharding::Replicated();
  std::optional<Sharding> s = ProjectSharding(iteration, FactorSpace(rule), to, rule);
  return s ? *s : Sharding::Replicated();
}

// Communication needed to go from `from` to `to` for a value of `shape`:
// 0 if equal or a local slice, else the value's bytes.
int64_t ReshardBytes(const Shape& shape, const Sharding& from, const Sharding& to) {
  if (shape.is_tuple()) {
    int64_t total = 0;
    for (int64_t i = 0; i < shape.tuple_size(); ++i)
      total += ReshardBytes(shape.tuple_shape(i), from.ElementSharding(shape, i),
                            to.ElementSharding(shape, i));
    return total;
  }
  auto layout = [](const Sharding& s) { return s.IsMaximal() ? Sharding::Replicated() : s; };
  Sharding f = layout(from), t = layout(to);
  if (f == t || f.IsManual() || t.IsManual()) return 0;
  if (f.IsReplicated() || IsSubTilingOrEqual(shape, t, f)) return 0;
  return shape.byte_size();
}

}  // namespace

absl::StatusOr<OpStrategy> ChooseStrategy(const Instruction& inst, const ShardingRule& rule,
                                          const std::vector<Sharding>& operand_shardings,
                                          const Sharding& result_sharding) {
  // Candidates, in preference order for ties.
  std::vector<Sharding> candidates;
  auto add = [&](std::optional<Sharding> s) {
    if (!s) return;
    Sharding legal = Legalize(*s, inst, rule);
    if (std::find(candidates.begin(), candidates.end(), legal) == candidates.end())
      candidates.push_back(legal);
  };
  for (size_t r = 0; r < rule.results.size(); ++r) {
    Sharding leaf = inst.shape().is_tuple()
                        ? result_sharding.ElementSharding(inst.shape(), static_cast<int64_t>(r))
                        : result_sharding;
    if (leaf.IsTiled()) add(ToFactors(leaf, rule.results[r], rule));
  }
  for (size_t i = 0; i < rule.operands.size() && i < operand_shardings.size(); ++i) {
    if (operand_shardings[i].IsTiled() && HasFactors(rule.operands[i]))
      add(ToFactors(operand_shardings[i], rule.operands[i], rule));
  }
  const size_t singles = candidates.size();
  for (size_t a = 0; a < singles; ++a) {
    for (size_t b = a + 1; b < singles; ++b) {
      if (candidates[a].IsTiled() && candidates[b].IsTiled())
        add(MergeCompatible(candidates[a], candidates[b]));
    }
  }
  add(Sharding::Replicated());

  std::optional<OpStrategy> best;
  std::tuple<int64_t, int64_t> best_cost{0, 0};
  for (const Sharding& iteration : candidates) {
    OpStrategy s;
    s.iteration = iteration;
    int64_t comm_operands = 0, bytes = 0;
    for (size_t i = 0; i < inst.operands().size(); ++i) {
      Sharding target = i < rule.operands.size() ? Project(iteration, rule.operands[i], rule)
                                                 : Sharding::Replicated();
      const Sharding& current = operand_shardings[i];
      int64_t moved = ReshardBytes(inst.operand(static_cast<int64_t>(i))->shape(), current, target);
      if (moved > 0) ++comm_operands;
      bytes += moved;
      s.operand_targets.push_back(std::move(target));
    }
    // Split reduction factors and the result's layout.
    std::vector<int64_t> counts = FactorTileCounts(iteration, FactorSpace(rule), rule);
    for (size_t f = 0; f < rule.factors.size(); ++f) {
      if (rule.factors[f].kind == FactorKind::kReduction && counts[f] > 1)
        s.split_reduction_factors.push_back(static_cast<int64_t>(f));
    }
    std::vector<Sharding> leaves;
    for (const DimFactors& r : rule.results) leaves.push_back(Project(iteration, r, rule));
    s.local_result = inst.shape().is_tuple() ? Sharding::Tuple(leaves) : leaves[0];
    if (!s.split_reduction_factors.empty()) bytes += inst.shape().byte_size();
    bytes += ReshardBytes(inst.shape(), s.local_result, result_sharding);
    std::tuple<int64_t, int64_t> cost{comm_operands, bytes};
    if (!best || cost < best_cost) {
      best = std::move(s);
      best_cost = cost;
    }
  }
  if (!best) return absl::InternalError(absl::StrCat("no strategy for ", inst.Describe()));
  return *std::move(best);
}

}  // namespace sharc::spmd
