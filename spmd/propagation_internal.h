// Shared state and steps of the propagation pass (spmd/propagation.h). Split
// by concern: propagation_ops.cc (how each op propagates, as a table),
// propagation_policy.cc (when a candidate wins), propagation_forward.cc
// (from operands), propagation_backward.cc (from users), propagation.cc
// (the driver).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/ir/module.h"
#include "spmd/propagation.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd::internal {

struct State {
  hlo::Module* module = nullptr;
  std::vector<bool> allow_to_output;      // empty = false
  std::vector<bool> allow_to_parameters;  // empty = false
  // Instructions whose sharding the user fixed.
  absl::flat_hash_set<const hlo::Instruction*> provided;
  // Fixed "Sharding" constraints that leave some dims open
  // (backend_config="unspecified_dims=[...]"): propagation may add tiling
  // on those dims only (XLA's B.8 rule).
  absl::flat_hash_map<const hlo::Instruction*, std::vector<int64_t>> open_dims;
  // Called computation -> the instruction that calls it.
  absl::flat_hash_map<const hlo::Computation*, hlo::Instruction*> callers;
  // shard_as / shard_like groups, by id, in the order members were found.
  absl::flat_hash_map<int64_t, std::vector<hlo::Instruction*>> shard_as;
  absl::flat_hash_map<int64_t, std::vector<hlo::Instruction*>> shard_like;
  absl::flat_hash_map<const hlo::Instruction*, std::pair<bool, int64_t>> group_of;
  PropagationResult* result = nullptr;
  int aggressiveness = 0;
  // Factor rules by instruction, built on first use (rules only depend on
  // shapes and attributes, which propagation never changes).
  absl::flat_hash_map<const hlo::Instruction*, std::unique_ptr<ShardingRule>> rules;
  const ShardingRule* RuleOf(const hlo::Instruction& inst);

  bool AllowToOutput() const {
    for (bool b : allow_to_output)
      if (b) return true;
    return false;
  }
  bool AllowToParameters() const {
    for (bool b : allow_to_parameters)
      if (b) return true;
    return false;
  }
  std::string Key(const hlo::Instruction& inst) const;
  // Sets `inst`'s sharding and records why.
  void Set(hlo::Instruction& inst, hlo::Sharding sharding, const hlo::Instruction* from,
           std::string how);
};

// --- the entry's parameters and root at the end (propagation_entry_rules.cc) ---
struct EntryShardings {
  std::vector<hlo::Sharding> root_leaves;  // a tuple root's, as written
  absl::flat_hash_map<int64_t, hlo::Sharding> params;
};
EntryShardings SaveEntryShardings(const hlo::Module& module);
// Restores the root elements and parameters whose per-element flag is
// false, and replicates those allowed to change whose tiling is uneven.
void ApplyEntryRules(State& state, const EntryShardings& saved);

// --- how each op propagates (propagation_ops.cc) ---
// The forward step of an op: `inst`'s sharding from its operands'; true if
// it changed.
using ForwardStep = bool (*)(hlo::Instruction& inst, State& state);
// The backward step of an op: the sharding `user` (whose operand `index` is
// `inst`) offers `inst`, given that `user` has a spatial sharding.
using BackwardStep = std::optional<hlo::Sharding> (*)(const hlo::Instruction& inst,
                                                      const hlo::Instruction& user,
                                                      int64_t index, State& state);
struct OpPropagation {
  // The lowest aggressiveness at which shardings cross the op, either way
  // (XLA's CanPropagateThroughAtAggressiveLevel).
  int min_level = 1;
  // The lowest at which the op takes a sharding from its users.
  int min_level_from_users = 0;
  // Whether propagation may split the op's result at all (XLA's
  // SupportSpatialPartitioning); one that may not only follows a
  // replicated operand.
  bool partitionable = false;
  ForwardStep forward = nullptr;    // nullptr: nothing from operands
  BackwardStep backward = nullptr;  // nullptr: nothing for operands
};
// The op's entry: the table's, else the elementwise one for an op with the
// elementwise trait, else the generic one for an op with a factor rule,
// else the one for ops propagation keeps whole.
const OpPropagation& PropagationOf(const hlo::Instruction& inst, State& state);
bool IsElementwise(hlo::Opcode opcode);

// Forward steps (propagation_forward.cc).
bool ForwardElementwise(hlo::Instruction& inst, State& state);
bool ForwardElementwiseFromOperand0(hlo::Instruction& inst, State& state);
bool ForwardSort(hlo::Instruction& inst, State& state);
bool ForwardThroughRule(hlo::Instruction& inst, State& state);
bool ForwardOperand0(hlo::Instruction& inst, State& state);
bool ForwardThroughOperand0(hlo::Instruction& inst, State& state);
bool ForwardBroadcast(hlo::Instruction& inst, State& state);
bool ForwardReshape(hlo::Instruction& inst, State& state);
bool ForwardReverse(hlo::Instruction& inst, State& state);
bool ForwardConcatenate(hlo::Instruction& inst, State& state);
bool ForwardDynamicUpdateSlice(hlo::Instruction& inst, State& state);
bool ForwardTuple(hlo::Instruction& inst, State& state);
bool ForwardGetTupleElement(hlo::Instruction& inst, State& state);
bool ForwardWhile(hlo::Instruction& inst, State& state);
bool ForwardIntoCalledParameter(hlo::Instruction& inst, State& state);
bool ForwardDot(hlo::Instruction& inst, State& state);
bool ForwardReduce(hlo::Instruction& inst, State& state);
bool ForwardReduceWindow(hlo::Instruction& inst, State& state);
bool ForwardGather(hlo::Instruction& inst, State& state);
bool ForwardScatter(hlo::Instruction& inst, State& state);
bool ForwardRepresentative(hlo::Instruction& inst, State& state);

// Backward steps (propagation_backward.cc), named for the user's op.
std::optional<hlo::Sharding> BackwardSameDims(const hlo::Instruction& inst, const hlo::Instruction& user,
                                              int64_t index, State& state);
// What the user's sharding is, the operand is offered {replicated}.
// Operand i of a (variadic) sort is laid out like result i.
std::optional<hlo::Sharding> BackwardSort(const hlo::Instruction& inst, const hlo::Instruction& user,
                                          int64_t index, State& state);
std::optional<hlo::Sharding> BackwardReplicated(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                int64_t index, State& state);
std::optional<hlo::Sharding> BackwardSameSharding(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                  int64_t index, State& state);
std::optional<hlo::Sharding> BackwardThroughRule(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                 int64_t index, State& state);
std::optional<hlo::Sharding> BackwardBroadcast(const hlo::Instruction& inst, const hlo::Instruction& user,
                                               int64_t index, State& state);
std::optional<hlo::Sharding> BackwardConcatenate(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                 int64_t index, State& state);
std::optional<hlo::Sharding> BackwardDynamicSlice(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                  int64_t index, State& state);
std::optional<hlo::Sharding> BackwardReduceWindow(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                  int64_t index, State& state);
std::optional<hlo::Sharding> BackwardReshape(const hlo::Instruction& inst, const hlo::Instruction& user,
                                             int64_t index, State& state);
std::optional<hlo::Sharding> BackwardPad(const hlo::Instruction& inst, const hlo::Instruction& user,
                                         int64_t index, State& state);
std::optional<hlo::Sharding> BackwardReverse(const hlo::Instruction& inst, const hlo::Instruction& user,
                                             int64_t index, State& state);
std::optional<hlo::Sharding> BackwardTuple(const hlo::Instruction& inst, const hlo::Instruction& user,
                                           int64_t index, State& state);
std::optional<hlo::Sharding> BackwardGetTupleElement(const hlo::Instruction& inst, const hlo::Instruction& user,
                                                     int64_t index, State& state);
std::optional<hlo::Sharding> BackwardDot(const hlo::Instruction& inst, const hlo::Instruction& user,
                                         int64_t index, State& state);
std::optional<hlo::Sharding> BackwardReduce(const hlo::Instruction& inst, const hlo::Instruction& user,
                                            int64_t index, State& state);
std::optional<hlo::Sharding> BackwardScatter(const hlo::Instruction& inst, const hlo::Instruction& user,
                                             int64_t index, State& state);

// --- policy (propagation_policy.cc) ---
bool IsSpatiallyPartitioned(const hlo::Sharding& sharding);
// Whether the op propagates at this aggressiveness.
bool CanPropagateAtLevel(const hlo::Instruction& inst, int aggressiveness, State& state);
// Whether propagation may give `inst` a sharding at all.
bool SupportsPartitioning(const hlo::Instruction& inst, State& state, bool forward);
// GSPMD's improvement: may `candidate` replace `inst`'s current sharding?
// Returns the sharding to set (possibly a merge), or nothing.
std::optional<hlo::Sharding> Improve(const hlo::Sharding& candidate, const hlo::Instruction& inst,
                                     bool may_combine, bool allow_aggressive);
// Improve + Set; true if the sharding changed.
bool MaybeImprove(const hlo::Sharding& candidate, hlo::Instruction& inst, bool may_combine,
                  bool allow_aggressive, State& state, const hlo::Instruction* from,
                  const std::string& how);
// Distinct users that are not the root of their computation.
int64_t NonRootUserCount(const hlo::Instruction& inst);
// XLA's ReverseSharding: flips the device order along reversed dims.
hlo::Sharding ReverseSharding(const hlo::Sharding& sharding, const std::vector<int64_t>& dims);
// Projection through the op's factor rule from one tensor to another.
// Indices: -1 = result (leaf `result_index`), >= 0 = that operand.
std::optional<hlo::Sharding> ProjectThrough(const hlo::Instruction& inst,
                                            const hlo::Sharding& sharding, int64_t from_index,
                                            int64_t to_index, State& state);

// --- directions ---
bool InferFromOperands(hlo::Instruction& inst, State& state);
bool InferFromUsers(hlo::Instruction& inst, State& state);
// Refines the open dims of a constraint listed in state.open_dims from its
// operand and users; true if its sharding changed.
bool RefineOpenDims(hlo::Instruction& inst, State& state);
// The dims listed by `unspecified_dims=[...]` in a backend_config, if any.
std::optional<std::vector<int64_t>> ParseUnspecifiedDims(const std::string& backend_config);
std::optional<hlo::Sharding> ShardingFromUser(const hlo::Instruction& inst,
                                              const hlo::Instruction& user, State& state);

}  // namespace sharc::spmd::internal
