// GSPMD's propagation policy: whether an instruction may receive a
// sharding at a given aggressiveness (from each op's entry in
// propagation_ops.cc), and when a candidate sharding replaces the current
// one.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ops/convolution_dims.h"
#include "spmd/propagation_internal.h"
#include "spmd/sharding_projection.h"
#include "spmd/sharding_rule.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd::internal {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Sharding;

std::string State::Key(const Instruction& inst) const {
  return absl::StrCat(inst.parent() ? inst.parent()->name() : "", "/", inst.name());
}

void State::Set(Instruction& inst, Sharding sharding, const Instruction* from, std::string how) {
  inst.set_sharding(std::move(sharding));
  if (result == nullptr) return;
  ShardingProvenance& p = result->provenance[Key(inst)];
  p.from = from != nullptr ? Key(*from) : "";
  p.how = std::move(how);
  p.aggressiveness = aggressiveness;
  result->changed = true;
}

bool IsSpatiallyPartitioned(const Sharding& sharding) {
  if (sharding.IsTuple()) {
    for (const Sharding& leaf : sharding.tuple_elements())
      if (IsSpatiallyPartitioned(leaf)) return true;
    return false;
  }
  return !sharding.IsMaximal() && !sharding.IsUnknown();
}

bool CanPropagateAtLevel(const Instruction& inst, int aggressiveness, State& state) {
  return aggressiveness >= PropagationOf(inst, state).min_level;
}

bool SupportsPartitioning(const Instruction& inst, State& state, bool forward) {
  const hlo::Computation* comp = inst.parent();
  const bool mapped = state.callers.contains(comp);
  if (comp != nullptr && comp->root() == &inst && !mapped) {
    bool entry_root = comp == state.module->entry();
    if (!(entry_root && forward && state.AllowToOutput())) return false;
  }
  // A parameter is a data-flow edge: split as its caller's operand (in a
  // called computation) or, backward only, as the entry's users ask when
  // the module allows it.
  if (inst.opcode() == Opcode::kParameter) {
    if (mapped) return true;
    return !forward && comp == state.module->entry() && state.AllowToParameters();
  }
  return PropagationOf(inst, state).partitionable;
}

namespace {

bool IsStrictlyBetter(const Sharding& candidate, const Sharding& current) {
  if (candidate.IsTuple() && current.IsTuple() &&
      candidate.tuple_elements().size() == current.tuple_elements().size()) {
    bool better = false;
    for (size_t i = 0; i < candidate.tuple_elements().size(); ++i) {
      const Sharding& c = candidate.tuple_elements()[i];
      const Sharding& o = current.tuple_elements()[i];
      if (c.IsManual() && o.IsTileMaximal()) better = true;
      if (o.IsManual() && c.IsTileMaximal()) return false;
    }
    return better;
  }
  return candidate.IsManual() && current.IsTileMaximal();
}

// XLA's MergeSharding: may rewrite `candidate` into a merge; true if the
// (possibly merged) candidate improves on `current`.
bool MergeInto(const Sharding& current, Sharding& candidate, bool may_combine) {
  if (candidate.IsTuple() || current.IsTuple()) {
    if (!candidate.IsTuple() || !current.IsTuple() ||
        candidate.tuple_elements().size() != current.tuple_elements().size()) {
      return false;
    }
    bool any = false;
    for (size_t i = 0; i < candidate.tuple_elements().size(); ++i) {
      any |= MergeInto(current.tuple_elements()[i], candidate.mutable_tuple_elements()[i],
                       may_combine);
    }
    return any;
  }
  if (may_combine && candidate.ReplicateOnLastTileDim() && current.ReplicateOnLastTileDim() &&
      candidate.tile_assignment().num_devices() == current.tile_assignment().num_devices()) {
    if (std::optional<Sharding> merged = MergeCompatible(current, candidate)) {
      candidate = *merged;
      return true;
    }
  }
  return IsMoreSpecific(candidate, current);
}

}  // namespace

std::optional<Sharding> Improve(const Sharding& candidate, const Instruction& inst,
                                bool may_combine, bool allow_aggressive) {
  const std::optional<Sharding>& current = inst.sharding();
  if (current && IsStrictlyBetter(candidate, *current)) return candidate;
  if (!IsSpatiallyPartitioned(candidate)) return std::nullopt;
  if (!current) return candidate;
  if (candidate.IsManual()) return std::nullopt;
  Sharding merged = candidate;
  const int64_t tiles = candidate.IsTuple() ? -1 : candidate.NumTiles();
  if (!MergeInto(*current, merged, may_combine)) return std::nullopt;
  // Anti-thrashing: a tiled value only moves to a refinement of its tiling,
  // unless the candidate grew by merging or the op may reshard freely.
  if (!allow_aggressive && inst.shape().is_array() && !current->IsTileMaximal() &&
      !current->IsTuple() && merged.NumTiles() == tiles &&
      !IsSubTilingOrEqual(inst.shape(), merged, *current)) {
    return std::nullopt;
  }
  if (merged == *current) return std::nullopt;
  return merged;
}

bool MaybeImprove(const Sharding& candidate, Instruction& inst, bool may_combine,
                  bool allow_aggressive, State& state, const Instruction* from,
                  const std::string& how) {
  std::optional<Sharding> improved = Improve(candidate, inst, may_combine, allow_aggressive);
  if (!improved) return false;
  const bool merged = inst.has_sharding() && *improved != candidate;
  state.Set(inst, *std::move(improved), from,
            merged ? absl::StrCat(how, ", merged with the partial sharding it had") : how);
  return true;
}

int64_t NonRootUserCount(const Instruction& inst) {
  int64_t n = 0;
  for (const Instruction* user : inst.users()) {
    if (user->parent() != nullptr && user->parent()->root() == user) continue;
    ++n;
  }
  return n;
}

Sharding ReverseSharding(const Sharding& sharding, const std::vector<int64_t>& dims) {
  if (!sharding.IsTiled()) return sharding;
  const hlo::TileAssignment& t = sharding.tile_assignment();
  std::vector<int64_t> devices(t.devices().size());
  std::vector<int64_t> index(static_cast<size_t>(t.num_dims()), 0);
  for (size_t k = 0; k < devices.size(); ++k) {
    std::vector<int64_t> src = index;
    for (int64_t d : dims) {
      if (d < sharding.TiledDataRank()) src[d] = t.dim(d) - 1 - index[d];
    }
    devices[k] = t.at(src);
    hlo::NextIndex(t.dims(), index);
  }
  return Sharding::Tiled(hlo::TileAssignment(t.dims(), std::move(devices)),
                         sharding.subgroup_types());
}

namespace {

// Propagation does not carry a grouped convolution's groups (the
// partitioner splits along them when shardings ask for it): XLA's
// InferConvolutionShardingFromOperands keeps only the batch of a grouped
// convolution whose kernel is large, and nothing when the input's features
// are split (ConvolutionDataParallelism). The grouped dims' factors are
// need-replication here, as sharc's rule had them before it split groups.
void KeepGroupsWhole(const Instruction& inst, ShardingRule& rule) {
  if (inst.opcode() != Opcode::kConvolution || rule.kind != ShardingRule::Kind::kFactors) return;
  absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(inst);
  if (!cd.ok() || (cd->feature_group_count == 1 && cd->batch_group_count == 1)) return;
  auto whole = [&](const DimFactors& dims, int64_t d) {
    for (int64_t f : dims[static_cast<size_t>(d)]) {
      rule.factors[static_cast<size_t>(f)].kind = FactorKind::kNeedReplication;
    }
  };
  whole(rule.operands[1], cd->rhs_output_feature);
  whole(rule.results[0], cd->out_feature);
  if (cd->feature_group_count > 1) whole(rule.operands[0], cd->lhs_feature);
  if (cd->batch_group_count > 1) whole(rule.operands[0], cd->lhs_batch);
}

}  // namespace

const ShardingRule* State::RuleOf(const Instruction& inst) {
  auto it = rules.find(&inst);
  if (it != rules.end()) return it->second.get();
  absl::StatusOr<ShardingRule> rule = GetShardingRule(inst);
  std::unique_ptr<ShardingRule>& slot = rules[&inst];
  if (rule.ok()) {
    KeepGroupsWhole(inst, *rule);
    slot = std::make_unique<ShardingRule>(*std::move(rule));
  }
  return slot.get();
}

std::optional<Sharding> ProjectThrough(const Instruction& inst, const Sharding& sharding,
                                       int64_t from_index, int64_t to_index, State& state) {
  const ShardingRule* rule = state.RuleOf(inst);
  if (rule == nullptr || rule->kind != ShardingRule::Kind::kFactors) return std::nullopt;
  auto dims_of = [&](int64_t index) -> const DimFactors* {
    if (index < 0) {
      size_t leaf = static_cast<size_t>(-index - 1);
      return leaf < rule->results.size() ? &rule->results[leaf] : nullptr;
    }
    return static_cast<size_t>(index) < rule->operands.size() ? &rule->operands[index] : nullptr;
  };
  const DimFactors* from = dims_of(from_index);
  const DimFactors* to = dims_of(to_index);
  if (from == nullptr || to == nullptr) return std::nullopt;
  return ProjectSharding(sharding, *from, *to, *rule);
}

}  // namespace sharc::spmd::internal
