// Forward propagation: an instruction's sharding from its operands'
// (XLA's InferShardingFromOperands). InferFromOperands is the step every
// op shares; the per-op steps below are what propagation_ops.cc's table
// names for each op. The geometry (which dims survive, how devices move)
// comes from the factor rules via ProjectThrough; these steps decide which
// operand to follow and how eagerly.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ops/custom_call_targets.h"
#include "spmd/propagation_internal.h"
#include "spmd/reshape_sharding.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd::internal {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Sharding;

namespace {

std::string How(const Instruction& inst) {
  return absl::StrCat("forward through ", hlo::OpcodeName(inst.opcode()));
}

bool Spatial(const Instruction* op) {
  return op->sharding().has_value() && IsSpatiallyPartitioned(*op->sharding());
}

// The operand to follow at aggressiveness 0: the most specific sharding, the
// first one on ties (XLA's PickRepresentativeOperand; the ops that follow
// their first operand instead have ForwardElementwiseFromOperand0).
const Instruction* RepresentativeOperand(const Instruction& inst) {
  const Instruction* best = nullptr;
  for (const Instruction* op : inst.operands()) {
    if (!op->has_sharding()) continue;
    if (op->shape().rank() != inst.shape().rank() && !inst.shape().is_tuple()) continue;
    if (best == nullptr || IsMoreSpecific(*op->sharding(), *best->sharding())) best = op;
  }
  return best;
}

// Gives every leaf of a tuple-shaped result the same sharding.
Sharding ForAllLeaves(const Sharding& s, const hlo::Shape& shape) {
  if (!shape.is_tuple()) return s;
  return Sharding::Tuple(std::vector<Sharding>(static_cast<size_t>(shape.leaf_count()), s));
}

bool ManualFromOperands(Instruction& inst, State& state) {
  if (inst.has_sharding() && !inst.sharding()->IsTileMaximal()) return false;
  const bool eligible = inst.shape().is_array() || inst.opcode() == Opcode::kReduce ||
                        inst.opcode() == Opcode::kReduceWindow ||
                        (inst.opcode() == Opcode::kCustomCall && inst.shape().is_tuple());
  if (!eligible) return false;
  if (inst.opcode() == Opcode::kCustomCall &&
      inst.attr_string("custom_call_target") == hlo::kShardToFullShapeTarget)
    return false;
  if (state.aggressiveness == 0 &&
      (inst.opcode() == Opcode::kConcatenate || inst.opcode() == Opcode::kDynamicSlice))
    return false;
  for (const Instruction* op : inst.operands()) {
    if (op->has_sharding() && op->sharding()->IsManual()) {
      state.Set(inst, ForAllLeaves(Sharding::Manual(), inst.shape()), op, "manual region");
      return true;
    }
  }
  return false;
}

// Ops that cannot be split follow a replicated operand, nothing else.
bool FollowReplicatedOperand(Instruction& inst, State& state) {
  if (!inst.shape().is_array() || inst.operand_count() == 0) return false;
  if (inst.parent() && inst.parent()->root() == &inst) return false;
  for (const Instruction* op : inst.operands()) {
    if (op->has_sharding() && op->sharding()->IsReplicated()) {
      return MaybeImprove(Sharding::Replicated(), inst, state.aggressiveness > 0, false, state, op,
                          How(inst));
    }
  }
  return false;
}

// An elementwise op: at level 0 it follows `rep` alone, above it merges
// every operand of its rank.
bool Elementwise(const Instruction* rep, Instruction& inst, State& state) {
  if (state.aggressiveness == 0) {
    if (rep == nullptr) return false;
    return MaybeImprove(*rep->sharding(), inst, false, true, state, rep, How(inst));
  }
  bool changed = false;
  const bool aggressive = inst.operand_count() == 1 && NonRootUserCount(inst) == 1;
  for (const Instruction* op : inst.operands()) {
    if (!Spatial(op) || op->shape().rank() != inst.shape().rank()) continue;
    changed |= MaybeImprove(*op->sharding(), inst, true, aggressive, state, op, How(inst));
  }
  return changed;
}

}  // namespace

bool ForwardElementwise(Instruction& inst, State& state) {
  return Elementwise(RepresentativeOperand(inst), inst, state);
}

bool ForwardElementwiseFromOperand0(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  return Elementwise(op0->has_sharding() ? op0 : nullptr, inst, state);
}

bool ForwardDot(Instruction& inst, State& state) {
  const bool may_combine = state.aggressiveness > 0;
  std::optional<Sharding> from[2];
  for (int i = 0; i < 2; ++i) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    std::optional<Sharding> projected =
        op->sharding()->IsTileMaximal() ? op->sharding() : ProjectThrough(inst, *op->sharding(), i, -1, state);
    if (!projected) continue;
    from[i] = Improve(*projected, inst, may_combine, false);
  }
  if (!from[0] && !from[1]) return false;
  if (!from[0] || !from[1]) {
    int i = from[0] ? 0 : 1;
    state.Set(inst, *from[i], inst.operand(i), How(inst));
    return true;
  }
  // Both operands propose: prefer the one the (single-user) chain of users
  // refines, else the larger operand, else lhs.
  int primary = inst.operand(0)->shape().byte_size() < inst.operand(1)->shape().byte_size() ? 1 : 0;
  if (inst.users().size() == 1) {
    const Instruction* user = inst.users()[0];
    while (user != nullptr && !user->has_sharding() && user->users().size() == 1) {
      user = user->users()[0];
    }
    if (user != nullptr && user->has_sharding() && user->shape().SameDimensions(inst.shape()) &&
        user->shape().is_array()) {
      bool fits0 = IsSubTilingOrEqual(inst.shape(), *user->sharding(), *from[0]);
      bool fits1 = IsSubTilingOrEqual(inst.shape(), *user->sharding(), *from[1]);
      if (fits0 != fits1) primary = fits0 ? 0 : 1;
    }
  }
  state.Set(inst, *from[primary], inst.operand(primary), How(inst));
  MaybeImprove(*from[1 - primary], inst, may_combine, false, state, inst.operand(1 - primary),
               How(inst));
  return true;
}

bool ForwardReduce(Instruction& inst, State& state) {
  bool changed = false;
  const int64_t n = inst.operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    Sharding candidate = Sharding::Replicated();
    if (!op->sharding()->IsReplicated()) {
      std::optional<Sharding> projected = ProjectThrough(inst, *op->sharding(), i, -1, state);
      if (!projected) continue;
      candidate = *projected;
    }
    changed |= MaybeImprove(ForAllLeaves(candidate, inst.shape()), inst, state.aggressiveness > 0,
                            true, state, op, How(inst));
  }
  return changed;
}

bool ForwardTuple(Instruction& inst, State& state) {
  bool any = false;
  for (const Instruction* op : inst.operands()) any |= Spatial(op);
  if (!any) return false;
  const bool had = inst.has_sharding();
  std::vector<Sharding> leaves =
      had ? inst.sharding()->LeavesFor(inst.shape())
          : std::vector<Sharding>(static_cast<size_t>(inst.shape().leaf_count()));
  size_t leaf = 0;
  for (const Instruction* op : inst.operands()) {
    std::vector<Sharding> op_leaves;
    if (op->has_sharding()) op_leaves = op->sharding()->LeavesFor(op->shape());
    for (int64_t k = 0; k < op->shape().leaf_count(); ++k, ++leaf) {
      if (!op->has_sharding()) continue;
      const Sharding& s = op_leaves[static_cast<size_t>(k)];
      if (!had || IsMoreSpecific(s, leaves[leaf])) leaves[leaf] = s;
    }
  }
  Sharding result = Sharding::Tuple(std::move(leaves));
  if (had && *inst.sharding() == result) return false;
  if (had && inst.sharding()->LeavesFor(inst.shape()) == result.tuple_elements()) return false;
  state.Set(inst, std::move(result), nullptr, How(inst));
  return true;
}

bool ForwardIntoCalledParameter(Instruction& inst, State& state) {
  auto it = state.callers.find(inst.parent());
  if (it == state.callers.end()) return false;
  const Instruction* caller = it->second;
  const Instruction* source = nullptr;
  if (caller->opcode() == Opcode::kCall) {
    source = caller->operand(inst.parameter_number());
  } else if (caller->opcode() == Opcode::kConditional) {
    std::vector<hlo::Computation*> branches = caller->called_computations();
    for (size_t b = 0; b < branches.size(); ++b) {
      if (branches[b] == inst.parent()) source = caller->operand(static_cast<int64_t>(b) + 1);
    }
  }
  if (source == nullptr || !Spatial(source)) return false;
  return MaybeImprove(*source->sharding(), inst, state.aggressiveness > 0, false, state, source,
                      "forward into a called computation");
}

bool ForwardThroughRule(Instruction& inst, State& state) {
  const bool may_combine = state.aggressiveness > 0;
  bool changed = false;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    std::vector<Sharding> leaves;
    for (int64_t leaf = 0; leaf < inst.shape().leaf_count(); ++leaf) {
      std::optional<Sharding> s = ProjectThrough(inst, *op->sharding(), i, -1 - leaf, state);
      if (!s) break;
      leaves.push_back(*std::move(s));
    }
    if (static_cast<int64_t>(leaves.size()) != inst.shape().leaf_count()) continue;
    Sharding candidate = inst.shape().is_tuple() ? Sharding::Tuple(std::move(leaves)) : leaves[0];
    changed |= MaybeImprove(candidate, inst, may_combine, false, state, op, How(inst));
  }
  return changed;
}

bool ForwardOperand0(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand_count() > 0 ? inst.operand(0) : nullptr;
  if (op0 == nullptr || !op0->has_sharding()) return false;
  return MaybeImprove(*op0->sharding(), inst, state.aggressiveness > 0, true, state, op0,
                      How(inst));
}

bool ForwardThroughOperand0(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (!op0->has_sharding()) return false;
  std::optional<Sharding> s = ProjectThrough(inst, *op0->sharding(), 0, -1, state);
  return s && MaybeImprove(*s, inst, state.aggressiveness > 0, true, state, op0, How(inst));
}

bool ForwardBroadcast(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (state.aggressiveness < 3 || !Spatial(op0) || op0->sharding()->IsReplicated()) return false;
  std::optional<Sharding> s = ProjectThrough(inst, *op0->sharding(), 0, -1, state);
  return s && MaybeImprove(*s, inst, true, true, state, op0, How(inst));
}

bool ForwardReshape(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (!op0->has_sharding()) return false;
  Sharding s = PropagateThroughReshape(op0->shape(), inst.shape(), *op0->sharding());
  return MaybeImprove(s, inst, state.aggressiveness > 0, true, state, op0, How(inst));
}

bool ForwardReverse(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (!op0->has_sharding()) return false;
  return MaybeImprove(ReverseSharding(*op0->sharding(), inst.attr_ints("dimensions")), inst,
                      state.aggressiveness > 0, true, state, op0, How(inst));
}

bool ForwardConcatenate(Instruction& inst, State& state) {
  const Instruction* rep = RepresentativeOperand(inst);
  if (rep == nullptr) return false;
  if (state.aggressiveness == 0) {
    // Only the narrow pattern XLA allows at level 0: every operand a
    // reshape of a parameter or tuple element, not split on the concat dim.
    int64_t dim = inst.attr_ints("dimensions").empty() ? 0 : inst.attr_ints("dimensions")[0];
    for (const Instruction* op : inst.operands()) {
      if (!op->has_sharding() || op->sharding()->NumTiles() <= 1) return false;
      if (op->opcode() != Opcode::kReshape) return false;
      Opcode src = op->operand(0)->opcode();
      if (src != Opcode::kParameter && src != Opcode::kGetTupleElement) return false;
      if (op->sharding()->TileCount(dim) != 1) return false;
    }
  }
  return MaybeImprove(*rep->sharding(), inst, state.aggressiveness > 0, true, state, rep,
                      How(inst));
}

bool ForwardDynamicUpdateSlice(Instruction& inst, State& state) {
  const bool may_combine = state.aggressiveness > 0;
  const Instruction* op0 = inst.operand(0);
  const Instruction* update = inst.operand(1);
  bool changed = false;
  if (update->has_sharding()) {
    if (std::optional<Sharding> s = ProjectThrough(inst, *update->sharding(), 1, -1, state)) {
      changed |= MaybeImprove(*s, inst, may_combine, true, state, update, How(inst));
    }
  }
  if (op0->has_sharding()) {
    changed |= MaybeImprove(*op0->sharding(), inst, may_combine, false, state, op0, How(inst));
  }
  return changed;
}

bool ForwardGetTupleElement(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (!op0->has_sharding()) return false;
  Sharding s = op0->sharding()->ElementSharding(op0->shape(), inst.attr_int("index"));
  if (s.IsManual()) {
    if (inst.has_sharding() && *inst.sharding() == s) return false;
    state.Set(inst, s, op0, How(inst));
    return true;
  }
  return MaybeImprove(s, inst, state.aggressiveness > 0, true, state, op0, How(inst));
}

bool ForwardWhile(Instruction& inst, State& state) {
  const Instruction* op0 = inst.operand(0);
  if (!op0->has_sharding()) return false;
  const bool may_combine = state.aggressiveness > 0;
  if (inst.has_sharding()) {
    std::optional<Sharding> improved = Improve(*op0->sharding(), inst, may_combine, false);
    if (!improved) return false;
    state.Set(inst, *improved, op0, How(inst));
    return true;
  }
  return MaybeImprove(*op0->sharding(), inst, may_combine, false, state, op0, How(inst));
}

bool ForwardReduceWindow(Instruction& inst, State& state) {
  for (const std::vector<int64_t>& w : inst.attr_int_lists("window")) {
    if (w.size() >= 6 && (w[4] != 1 || w[5] != 1)) return false;  // dilations
  }
  bool changed = false;
  for (int64_t i = 0; i < inst.operand_count() / 2; ++i) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    changed |= MaybeImprove(ForAllLeaves(*op->sharding(), inst.shape()), inst,
                            state.aggressiveness > 0, true, state, op, How(inst));
  }
  return changed;
}

bool ForwardGather(Instruction& inst, State& state) {
  bool changed = false;
  for (int64_t i : {1, 0}) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    if (std::optional<Sharding> s = ProjectThrough(inst, *op->sharding(), i, -1, state)) {
      changed |= MaybeImprove(*s, inst, state.aggressiveness > 0, false, state, op, How(inst));
    }
  }
  return changed;
}

bool ForwardScatter(Instruction& inst, State& state) {
  const bool may_combine = state.aggressiveness > 0;
  const int64_t n = (inst.operand_count() - 1) / 2;
  bool changed = false;
  // Result i is laid out like operand i.
  bool any = false;
  std::vector<Sharding> leaves;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* op = inst.operand(i);
    any |= Spatial(op);
    leaves.push_back(op->has_sharding() ? *op->sharding() : Sharding::Replicated());
  }
  if (any) {
    const Sharding s = inst.shape().is_tuple() ? Sharding::Tuple(leaves) : leaves[0];
    changed |= MaybeImprove(s, inst, may_combine, false, state, inst.operand(0), How(inst));
  }
  // From the updates, and from the indices along the dims they share with
  // the operand (batch dims, explicit or built from iotas).
  std::vector<int64_t> sources;
  for (int64_t j = 0; j < n; ++j) sources.push_back(n + 1 + j);
  sources.push_back(n);
  for (int64_t i : sources) {
    const Instruction* op = inst.operand(i);
    if (!Spatial(op)) continue;
    std::vector<Sharding> projected;
    bool all = true;
    for (int64_t r = 0; r < n && all; ++r) {
      std::optional<Sharding> s = ProjectThrough(inst, *op->sharding(), i, -1 - r, state);
      if (s) projected.push_back(*s);
      all = s.has_value();
    }
    if (!all) continue;
    const Sharding s = inst.shape().is_tuple() ? Sharding::Tuple(projected) : projected[0];
    changed |= MaybeImprove(s, inst, may_combine, false, state, op, How(inst));
  }
  return changed;
}

// A sort is laid out like its representative operand (every result alike),
// as XLA's propagation does, unless that splits the sort dim and no other
// dim could take those tiles (which the partitioner would need to sort
// whole rows).
bool ForwardSort(Instruction& inst, State& state) {
  const Instruction* rep = RepresentativeOperand(inst);
  if (rep == nullptr || !Spatial(rep) || inst.attr_ints("dimensions").size() != 1) return false;
  const Sharding& s = *rep->sharding();
  const int64_t sort_dim = inst.attr_ints("dimensions")[0];
  const hlo::Shape& shape = rep->shape();
  if (s.IsTiled() && s.TileCount(sort_dim) > 1) {
    bool movable = false;
    for (int64_t d = 0; d < shape.rank() && shape.rank() >= 2 && shape.dim(sort_dim) != 1; ++d) {
      if (d != sort_dim && shape.dim(d) % (s.TileCount(sort_dim) * s.TileCount(d)) == 0) movable = true;
    }
    if (!movable) return false;
  }
  return MaybeImprove(ForAllLeaves(s, inst.shape()), inst, state.aggressiveness > 0,
                      inst.users().size() == 1, state, rep, How(inst));
}

bool ForwardRepresentative(Instruction& inst, State& state) {
  const Instruction* rep = RepresentativeOperand(inst);
  if (rep == nullptr) return false;
  return MaybeImprove(*rep->sharding(), inst, state.aggressiveness > 0, true, state, rep,
                      How(inst));
}

bool InferFromOperands(Instruction& inst, State& state) {
  const OpPropagation& op = PropagationOf(inst, state);
  if (state.aggressiveness < op.min_level) return false;
  if (inst.has_sharding() && inst.sharding()->IsManual()) return false;
  if (ManualFromOperands(inst, state)) return true;
  if (!SupportsPartitioning(inst, state, /*forward=*/true)) {
    // A parameter of a called computation follows its caller's operand
    // whether or not it may be split (a data-flow edge, not an op).
    if (inst.opcode() == Opcode::kParameter) return ForwardIntoCalledParameter(inst, state);
    return FollowReplicatedOperand(inst, state);
  }
  return op.forward != nullptr && op.forward(inst, state);
}

}  // namespace sharc::spmd::internal
