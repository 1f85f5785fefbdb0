// Backward propagation: an instruction's sharding from its users' (XLA's
// InferShardingFromUsers / GetShardingFromUser). The first user that offers
// a sharding sets it; later users can only merge into it or refine it.
// What a user offers is its op's backward step (propagation_ops.cc's
// table), one function per kind of op below.
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

int64_t OperandIndex(const Instruction& user, const Instruction& operand) {
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) == &operand) return i;
  }
  return -1;
}

}  // namespace

std::optional<Sharding> BackwardDot(const Instruction& inst, const Instruction& user,
                                    int64_t index, State& state) {
  const bool may_combine = state.aggressiveness > 0;
  std::optional<Sharding> from_output = ProjectThrough(user, *user.sharding(), -1, index, state);
  if (!from_output) return std::nullopt;
  const Instruction* other = user.operand(1 - index);
  if (!other->has_sharding() || !IsSpatiallyPartitioned(*other->sharding())) return from_output;
  std::optional<Sharding> from_other = ProjectThrough(user, *other->sharding(), 1 - index, index, state);
  if (!from_other) return from_output;
  // Whichever is more specific wins; compatible partial shardings merge.
  if (from_output->ReplicateOnLastTileDim() && from_other->ReplicateOnLastTileDim() &&
      may_combine) {
    if (std::optional<Sharding> merged = MergeCompatible(*from_output, *from_other)) return merged;
  }
  if (IsMoreSpecific(*from_other, *from_output)) return from_other;
  return from_output;
}

std::optional<Sharding> BackwardReduce(const Instruction& inst, const Instruction& user,
                                       int64_t index, State& state) {
  if (inst.shape().rank() == 0) return std::nullopt;
  const int64_t n = user.operand_count() / 2;
  if (index >= n) return std::nullopt;
  Sharding s = user.sharding()->ElementSharding(user.shape(), user.shape().is_tuple() ? index : 0);
  Sharding candidate = s;
  if (!s.IsTileMaximal()) {
    std::optional<Sharding> p = ProjectThrough(user, s, -1 - (user.shape().is_tuple() ? index : 0),
                                               index, state);
    if (!p) return std::nullopt;
    candidate = *p;
  }
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* other = user.operand(i);
    if (i == index || !other->has_sharding()) continue;
    if (candidate.IsReplicated() && other->sharding()->IsTiled()) {
      candidate = *other->sharding();
    } else if (std::optional<Sharding> merged =
                   MergeCompatible(candidate, *other->sharding(), /*b_may_be_tiled=*/true)) {
      candidate = *merged;
    }
  }
  return candidate;
}

std::optional<Sharding> BackwardGetTupleElement(const Instruction& inst,
                                                const Instruction& user, int64_t, State&) {
  std::vector<Sharding> leaves;
  if (inst.has_sharding()) {
    leaves = inst.sharding()->LeavesFor(inst.shape());
  } else {
    leaves.assign(static_cast<size_t>(inst.shape().leaf_count()), Sharding::Replicated());
  }
  int64_t index = user.attr_int("index");
  int64_t start = 0;
  for (int64_t i = 0; i < index; ++i) start += inst.shape().tuple_shape(i).leaf_count();
  std::vector<Sharding> user_leaves = user.sharding()->LeavesFor(user.shape());
  for (size_t k = 0; k < user_leaves.size(); ++k) leaves[start + k] = user_leaves[k];
  return Sharding::Tuple(std::move(leaves));
}

std::optional<Sharding> BackwardSameDims(const Instruction& inst, const Instruction& user,
                                         int64_t, State&) {
  // Same shape (ignoring element type): the user's sharding.
  if (user.shape().SameDimensions(inst.shape())) return *user.sharding();
  return std::nullopt;
}

std::optional<Sharding> BackwardSameSharding(const Instruction&, const Instruction& user, int64_t,
                                             State&) {
  return *user.sharding();
}

std::optional<Sharding> BackwardSort(const Instruction&, const Instruction& user, int64_t index,
                                     State&) {
  const Sharding& us = *user.sharding();
  return user.shape().is_tuple() ? us.ElementSharding(user.shape(), index) : us;
}

std::optional<Sharding> BackwardReplicated(const Instruction&, const Instruction&, int64_t,
                                           State&) {
  return Sharding::Replicated();
}

std::optional<Sharding> BackwardThroughRule(const Instruction&, const Instruction& user,
                                            int64_t index, State& state) {
  return ProjectThrough(user, *user.sharding(), -1, index, state);
}

std::optional<Sharding> BackwardBroadcast(const Instruction&, const Instruction& user, int64_t,
                                          State& state) {
  const Sharding& us = *user.sharding();
  if (us.IsReplicated() || us.IsManual()) return us;
  return ProjectThrough(user, us, -1, 0, state);
}

std::optional<Sharding> BackwardConcatenate(const Instruction&, const Instruction& user, int64_t,
                                            State& state) {
  if (state.aggressiveness == 0) return std::nullopt;
  return *user.sharding();
}

std::optional<Sharding> BackwardDynamicSlice(const Instruction&, const Instruction& user,
                                             int64_t index, State& state) {
  const Sharding& us = *user.sharding();
  if (state.aggressiveness == 0) return std::nullopt;
  if (us.IsReplicated()) return us;
  if (user.opcode() == Opcode::kDynamicUpdateSlice && index == 0) return us;
  if (index > 1 || (user.opcode() == Opcode::kDynamicSlice && index > 0)) return std::nullopt;
  return ProjectThrough(user, us, -1, index, state);
}

std::optional<Sharding> BackwardReduceWindow(const Instruction&, const Instruction& user,
                                             int64_t index, State&) {
  const int64_t n = user.operand_count() / 2;
  if (index >= n) return std::nullopt;
  const Sharding& us = *user.sharding();
  return user.shape().is_tuple() ? us.ElementSharding(user.shape(), index) : us;
}

std::optional<Sharding> BackwardReshape(const Instruction& inst, const Instruction& user, int64_t,
                                        State&) {
  return PropagateThroughReshape(user.shape(), inst.shape(), *user.sharding());
}

std::optional<Sharding> BackwardPad(const Instruction&, const Instruction& user, int64_t index,
                                    State&) {
  if (index != 0) return std::nullopt;
  return *user.sharding();
}

std::optional<Sharding> BackwardReverse(const Instruction&, const Instruction& user, int64_t,
                                        State&) {
  return ReverseSharding(*user.sharding(), user.attr_ints("dimensions"));
}

std::optional<Sharding> BackwardTuple(const Instruction& inst, const Instruction& user, int64_t,
                                      State&) {
  std::optional<Sharding> best;
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) != &inst) continue;
    Sharding s = user.sharding()->ElementSharding(user.shape(), i);
    if (!best || IsMoreSpecific(s, *best)) best = s;
  }
  return best;
}

std::optional<Sharding> BackwardScatter(const Instruction&, const Instruction& user,
                                        int64_t index, State& state) {
  const Sharding& us = *user.sharding();
  const int64_t n = (user.operand_count() - 1) / 2;
  auto result_leaf = [&](int64_t r) {
    return user.shape().is_tuple() ? us.ElementSharding(user.shape(), r) : us;
  };
  // Operand i of a variadic scatter is laid out like result i.
  if (index < n) return result_leaf(index);
  if (index == n) {
    const Instruction* update = user.operand(n + 1);
    if (!update->has_sharding()) return std::nullopt;
    return ProjectThrough(user, *update->sharding(), n + 1, n, state);
  }
  const int64_t r = index - n - 1;
  return ProjectThrough(user, result_leaf(r), -1 - r, index, state);
}

std::optional<Sharding> ShardingFromUser(const Instruction& inst, const Instruction& user,
                                         State& state) {
  const OpPropagation& op = PropagationOf(user, state);
  if (state.aggressiveness < op.min_level || op.backward == nullptr) return std::nullopt;
  if (!user.has_sharding() || !IsSpatiallyPartitioned(*user.sharding())) return std::nullopt;
  const int64_t index = OperandIndex(user, inst);
  if (index < 0) return std::nullopt;
  return op.backward(inst, user, index, state);
}

bool InferFromUsers(Instruction& inst, State& state) {
  const int a = state.aggressiveness;
  if (a < PropagationOf(inst, state).min_level_from_users) return false;
  if (inst.has_sharding() && inst.sharding()->IsManual()) return false;
  if (!inst.has_sharding() || inst.sharding()->IsTileMaximal()) {
    for (const Instruction* user : inst.users()) {
      if (!user->has_sharding() || hlo::IsCustomCallTo(*user, hlo::kFullToShardShapeTarget)) continue;
      if (inst.shape().is_array() && user->sharding()->IsManual()) {
        state.Set(inst, Sharding::Manual(), user, "manual region (from a user)");
        return true;
      }
    }
  }
  if (!SupportsPartitioning(inst, state, /*forward=*/false)) return false;
  bool changed = false;
  for (const Instruction* user : inst.users()) {
    std::optional<Sharding> candidate = ShardingFromUser(inst, *user, state);
    if (!candidate) continue;
    changed |= MaybeImprove(*candidate, inst, a > 0, false, state, user,
                            absl::StrCat("backward from ", hlo::OpcodeName(user->opcode())));
  }
  return changed;
}

}  // namespace sharc::spmd::internal
