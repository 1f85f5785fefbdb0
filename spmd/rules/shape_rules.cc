// Data-movement ops: broadcast, reshape, transpose, slice, pad, concatenate,
// reverse, dynamic-slice, dynamic-update-slice, iota and the sources.
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// One pass-through factor per result dim; no operands take part.
ShardingRule SourceRule(const Instruction& inst) {
  ShardingRule rule;
  DimFactors dims;
  if (inst.shape().is_array()) {
    for (int64_t d = 0; d < inst.shape().rank(); ++d)
      dims.push_back({rule.AddFactor(inst.shape().dim(d), FactorKind::kPassThrough)});
  }
  rule.results.push_back(dims);
  for (const Instruction* op : inst.operands())
    rule.operands.push_back(DimFactors(op->shape().is_array() ? op->shape().rank() : 0));
  return rule;
}

// Operand 0 and the result share a factor per dim; dims whose size changes
// carry a permutation factor (the data moves along them).
ShardingRule SameRankRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& in = inst.operand(0)->shape();
  DimFactors dims;
  const hlo::IntListList& padding = inst.attr_int_lists("padding");
  const hlo::IntListList& slice = inst.attr_int_lists("slice");
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    // Data moves along a dim if its size changes, or a pad or slice shifts
    // it (pad 1_-1 keeps the size), or it is reversed.
    bool moves = in.dim(d) != inst.shape().dim(d) || inst.opcode() == Opcode::kReverse;
    if (inst.opcode() == Opcode::kPad && static_cast<size_t>(d) < padding.size()) {
      for (int64_t v : padding[static_cast<size_t>(d)]) moves |= v != 0;
    }
    if (inst.opcode() == Opcode::kSlice && static_cast<size_t>(d) < slice.size()) {
      const auto& sl = slice[static_cast<size_t>(d)];
      moves |= sl.size() >= 3 && (sl[0] != 0 || sl[2] != 1);
    }
    dims.push_back({rule.AddFactor(inst.shape().dim(d),
                                   moves ? FactorKind::kPermutation : FactorKind::kPassThrough)});
  }
  rule.operands.push_back(dims);
  for (int64_t i = 1; i < inst.operand_count(); ++i)
    rule.operands.push_back(DimFactors(inst.operand(i)->shape().rank()));
  rule.results.push_back(dims);
  return rule;
}

absl::StatusOr<ShardingRule> BroadcastRule(const Instruction& inst) {
  ShardingRule rule = SourceRule(inst);
  rule.operands.clear();
  const std::vector<int64_t>& dims = inst.attr_ints("dimensions");
  DimFactors operand;
  for (int64_t d : dims) operand.push_back(rule.results[0][static_cast<size_t>(d)]);
  rule.operands.push_back(operand);
  return rule;
}

absl::StatusOr<ShardingRule> TransposeRule(const Instruction& inst) {
  ShardingRule rule = SourceRule(inst);
  rule.operands.clear();
  const std::vector<int64_t>& perm = inst.attr_ints("dimensions");
  DimFactors operand(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) operand[static_cast<size_t>(perm[i])] = rule.results[0][i];
  rule.operands.push_back(operand);
  return rule;
}

absl::StatusOr<ShardingRule> ReshapeRule(const Instruction& inst) {
  ShardingRule rule;
  DimFactors from, to;
  AddReshapeFactors(rule, inst.operand(0)->shape().dims(), inst.shape().dims(), from, to);
  rule.operands.push_back(from);
  rule.results.push_back(to);
  return rule;
}

absl::StatusOr<ShardingRule> ConcatenateRule(const Instruction& inst) {
  ShardingRule rule;
  int64_t concat_dim = inst.attr_ints("dimensions").empty() ? 0 : inst.attr_ints("dimensions")[0];
  DimFactors dims;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    dims.push_back({rule.AddFactor(inst.shape().dim(d), d == concat_dim ? FactorKind::kPermutation
                                                                         : FactorKind::kPassThrough)});
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) rule.operands.push_back(dims);
  rule.results.push_back(dims);
  return rule;
}

// Sliced dims (smaller than the operand) cannot stay split: they need the
// whole dimension on every device.
absl::StatusOr<ShardingRule> DynamicSliceRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& in = inst.operand(0)->shape();
  DimFactors dims;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    bool sliced = in.dim(d) != inst.shape().dim(d);
    dims.push_back({rule.AddFactor(inst.shape().dim(d), sliced ? FactorKind::kNeedReplication
                                                               : FactorKind::kPassThrough)});
  }
  rule.operands.push_back(dims);
  for (int64_t i = 1; i < inst.operand_count(); ++i) rule.operands.push_back(DimFactors(0));
  rule.results.push_back(dims);
  return rule;
}

// The base and the result share every dim; the update shares the dims it
// covers whole and has a need-replication factor of its own elsewhere, and
// the base's partly covered dims need replication too.
absl::StatusOr<ShardingRule> DynamicUpdateSliceRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& update = inst.operand(1)->shape();
  DimFactors base, upd;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    // A dim the update covers only in part cannot be split: each device
    // would write the update at the global start into its own tile.
    const bool covered = update.dim(d) == inst.shape().dim(d);
    int64_t f = rule.AddFactor(inst.shape().dim(d),
                               covered ? FactorKind::kPassThrough : FactorKind::kNeedReplication);
    base.push_back({f});
    if (covered) {
      upd.push_back({f});
    } else {
      upd.push_back({rule.AddFactor(update.dim(d), FactorKind::kNeedReplication)});
    }
  }
  rule.operands.push_back(base);
  rule.operands.push_back(upd);
  for (int64_t i = 2; i < inst.operand_count(); ++i) rule.operands.push_back(DimFactors(0));
  rule.results.push_back(base);
  return rule;
}

}  // namespace

void RegisterShapeRules(ShardingRuleRegistry& registry) {
  for (Opcode op : {Opcode::kParameter, Opcode::kConstant, Opcode::kIota, Opcode::kPartitionId,
                    Opcode::kReplicaId}) {
    registry.Register(op, [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
      if (!inst.shape().is_array()) {
        ShardingRule rule;
        rule.kind = ShardingRule::Kind::kDataFlow;
        return rule;
      }
      return SourceRule(inst);
    });
  }
  registry.Register(Opcode::kBroadcast, BroadcastRule);
  registry.Register(Opcode::kTranspose, TransposeRule);
  registry.Register(Opcode::kReshape, ReshapeRule);
  registry.Register(Opcode::kConcatenate, ConcatenateRule);
  registry.Register(Opcode::kDynamicSlice, DynamicSliceRule);
  registry.Register(Opcode::kDynamicUpdateSlice, DynamicUpdateSliceRule);
  for (Opcode op : {Opcode::kSlice, Opcode::kPad, Opcode::kReverse}) {
    registry.Register(op, [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
      return SameRankRule(inst);
    });
  }
}

}  // namespace sharc::spmd
