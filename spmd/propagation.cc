// The propagation driver. As a list:
//   1. validate annotations against shapes and the device count;
//   2. turn "Sharding" custom-calls into fixed copies, collect shard groups;
//   3. tie while/call/conditional values together and fix the annotated set;
//   4. for aggressiveness 0..3: sweep every computation (groups, forward,
//      backward) until nothing changes;
//   5. align shard_as groups, sweep once more at level 3;
//   6. end-of-pass rules for the entry's parameters and root
//      (propagation_entry_rules.cc).
#include "spmd/propagation.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/custom_call_targets.h"
#include "spmd/propagation_internal.h"
#include "spmd/unreduced.h"
#include "spmd/sharding_util.h"
#include "spmd/while_channel_devices.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;
using hlo::Sharding;
using internal::State;

namespace {

using Cache = absl::flat_hash_set<const Instruction*>;

absl::Status ValidateAnnotations(const Module& module) {
  const int64_t devices = module.config().num_partitions > 1 ? module.config().num_partitions : 0;
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding()) continue;
      absl::Status st = inst->sharding()->Validate(inst->shape(), devices);
      if (!st.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "annotation on '", inst->name(), "' does not fit: ", st.message(), ", in ",
            inst->Describe(), " (the module is compiled for ", module.config().num_partitions,
            " devices; pass --devices with the count its annotations use, or fix the "
            "annotation)"));
      }
    }
  }
  return absl::OkStatus();
}

// A group member replaced by another instruction (a "Sharding" custom-call
// that an "unknown" one dissolved into, then itself became a copy): the
// groups name the replacement.
void ReplaceGroupMember(State& state, Instruction* old_member, Instruction* new_member) {
  auto it = state.group_of.find(old_member);
  if (it == state.group_of.end()) return;
  const auto [shard_as, id] = it->second;
  state.group_of.erase(it);
  state.group_of[new_member] = {shard_as, id};
  for (Instruction*& m : (shard_as ? state.shard_as : state.shard_like)[id]) {
    if (m == old_member) m = new_member;
  }
}

// "Sharding" custom-calls become copies carrying (and fixing) their
// annotation; "unknown" ones only pass their shard group to the operand.
absl::Status ProcessShardingInstructions(State& state) {
  for (Computation* comp : state.module->computations()) {
    std::vector<Instruction*> insts = comp->instructions();
    for (auto it = insts.rbegin(); it != insts.rend(); ++it) {
      Instruction* inst = *it;
      std::optional<hlo::ShardGroup> group;
      if (inst->has_sharding() && !inst->sharding()->IsTuple()) {
        group = inst->sharding()->shard_group();
        if (group) {
          Sharding stripped = *inst->sharding();
          stripped.set_shard_group(std::nullopt);
          inst->set_sharding(stripped);
        }
      }
      Instruction* member = inst;
      if (hlo::IsCustomCallTo(*inst, hlo::kShardingTarget) && inst->has_sharding() &&
          inst->operand_count() == 1) {
        Instruction* operand = inst->operand(0);
        if (!inst->sharding()->IsUnknown() || operand->opcode() == Opcode::kParameter) {
          auto copy = Instruction::Create(Opcode::kCopy, inst->name() + ".sharding-copy",
                                          inst->shape(), {operand});
          copy->set_sharding(*inst->sharding());
          copy->set_location(inst->location());
          copy->mutable_metadata() = inst->metadata();
          Instruction* raw = comp->AddInstructionBefore(std::move(copy), inst);
          std::optional<std::vector<int64_t>> open =
              internal::ParseUnspecifiedDims(inst->attr_string("backend_config"));
          if (open) state.open_dims[raw] = *open;
          inst->ReplaceAllUsesWith(raw);
          ReplaceGroupMember(state, inst, raw);
          std::string name = inst->name();
          RETURN_IF_ERROR(comp->RemoveInstruction(inst));
          raw->set_name(name);
          member = raw;
          if (!operand->has_sharding() && !open && !raw->sharding()->IsUnknown()) {
            operand->set_sharding(*raw->sharding());
          }
        } else {
          // Dissolve: the operand joins the group.
          inst->ReplaceAllUsesWith(operand);
          ReplaceGroupMember(state, inst, operand);
          RETURN_IF_ERROR(comp->RemoveInstruction(inst));
          member = operand;
        }
      }
      if (group) {
        auto& groups = group->shard_as ? state.shard_as : state.shard_like;
        groups[group->id].push_back(member);
        state.group_of[member] = {group->shard_as, group->id};
      }
    }
  }
  // Members were found users-first; keep definition order within groups.
  for (auto* groups : {&state.shard_as, &state.shard_like}) {
    for (auto& [id, members] : *groups) std::reverse(members.begin(), members.end());
  }
  return absl::OkStatus();
}

// The values that must share one sharding with a control-flow op.
std::vector<Instruction*> RelatedTo(const Instruction& inst) {
  std::vector<Instruction*> out;
  switch (inst.opcode()) {
    case Opcode::kWhile: {
      Computation* body = inst.attr_computation("body");
      Computation* cond = inst.attr_computation("condition");
      if (body) {
        out.push_back(body->root());
        if (body->num_parameters() > 0) out.push_back(body->parameter(0));
      }
      if (cond && cond->num_parameters() > 0) out.push_back(cond->parameter(0));
      break;
    }
    case Opcode::kConditional:
      for (Computation* branch : inst.called_computations()) out.push_back(branch->root());
      break;
    case Opcode::kCall:
      if (Computation* callee = inst.attr_computation("to_apply")) out.push_back(callee->root());
      break;
    default:
      break;
  }
  return out;
}

class Driver {
 public:
  explicit Driver(State& state) : state_(state) {}

  // XLA's post order: a DFS from every instruction without users, operand 0
  // finishing first.
  std::vector<Instruction*> PostOrder(const Computation& comp) {
    std::vector<Instruction*> order;
    absl::flat_hash_set<const Instruction*> visited;
    for (Instruction* start : comp.instructions()) {
      if (!start->users().empty() || visited.contains(start)) continue;
      std::vector<std::pair<Instruction*, size_t>> stack{{start, 0}};
      visited.insert(start);
      while (!stack.empty()) {
        auto& [inst, next] = stack.back();
        if (next < inst->operands().size()) {
          Instruction* op = inst->operands()[next++];
          if (visited.insert(op).second) stack.push_back({op, 0});
          continue;
        }
        order.push_back(inst);
        stack.pop_back();
      }
    }
    return order;
  }

  void ClearCache(const Instruction& inst) {
    for (const Instruction* op : inst.operands()) from_users_.erase(op);
    for (const Instruction* user : inst.users()) {
      from_operands_.erase(user);
      for (const Computation* callee : user->called_computations()) {
        for (const Instruction* p : callee->parameters()) from_operands_.erase(p);
      }
    }
    auto it = state_.group_of.find(&inst);
    if (it != state_.group_of.end()) {
      const auto& groups = it->second.first ? state_.shard_as : state_.shard_like;
      for (const Instruction* m : groups.at(it->second.second)) from_group_.erase(m);
    }
  }

  // Copies a control-flow value's sharding to the values tied to it.
  void SyncRelated(Instruction& inst) {
    std::vector<Instruction*> targets;
    if (inst.opcode() == Opcode::kWhile || inst.opcode() == Opcode::kConditional ||
        inst.opcode() == Opcode::kCall) {
      targets = RelatedTo(inst);
    }
    auto caller_it = state_.callers.find(inst.parent());
    if (caller_it != state_.callers.end()) {
      Instruction* caller = caller_it->second;
      const bool is_root = inst.parent()->root() == &inst;
      const bool is_param = inst.opcode() == Opcode::kParameter;
      // A while's condition root (its pred) is not tied to the loop value.
      const bool condition_root = is_root && caller->opcode() == Opcode::kWhile &&
                                  caller->attr_computation("condition") == inst.parent();
      if ((is_root || is_param) && !condition_root) {
        if (caller->opcode() == Opcode::kWhile) {
          targets.push_back(caller);
          for (Instruction* r : RelatedTo(*caller)) targets.push_back(r);
        } else if (is_root) {
          targets.push_back(caller);
          if (caller->opcode() == Opcode::kConditional) {
            for (Instruction* r : RelatedTo(*caller)) targets.push_back(r);
          }
        } else if (caller->opcode() == Opcode::kCall) {
          targets.push_back(caller->operand(inst.parameter_number()));
        } else if (caller->opcode() == Opcode::kConditional) {
          std::vector<Computation*> branches = caller->called_computations();
          for (size_t b = 0; b < branches.size(); ++b) {
            if (branches[b] == inst.parent())
              targets.push_back(caller->operand(static_cast<int64_t>(b) + 1));
          }
        }
      }
    }
    for (Instruction* target : targets) {
      if (target == &inst || state_.provided.contains(target)) continue;
      if (target->sharding() == inst.sharding()) continue;
      state_.Set(*target, *inst.sharding(), &inst, "tied by control flow");
      SyncRelated(*target);
      ClearCache(*target);
    }
  }

  void OnChange(Instruction& inst) {
    SyncRelated(inst);
    ClearCache(inst);
  }

  bool InferFromGroup(Instruction& inst) {
    if (!internal::CanPropagateAtLevel(inst, state_.aggressiveness, state_)) return false;
    if (inst.has_sharding() && inst.sharding()->IsManual()) return false;
    auto [as, id] = state_.group_of.at(&inst);
    const auto& members = (as ? state_.shard_as : state_.shard_like).at(id);
    bool changed = false;
    for (const Instruction* m : members) {
      if (m == &inst || !m->has_sharding()) continue;
      if ((!inst.has_sharding() || inst.sharding()->IsTileMaximal()) && m->sharding()->IsManual()) {
        state_.Set(inst, Sharding::Manual(), m, "shard group");
        return true;
      }
      changed |= internal::MaybeImprove(*m->sharding(), inst, true, false, state_, m,
                                        absl::StrCat(as ? "shard_as" : "shard_like", " group ", id));
    }
    return changed;
  }

  // The graph does not change while propagating, so each computation's
  // post order is computed once.
  const std::vector<Instruction*>& CachedPostOrder(const Computation& comp) {
    auto it = post_orders_.find(&comp);
    if (it == post_orders_.end()) it = post_orders_.emplace(&comp, PostOrder(comp)).first;
    return it->second;
  }

  void RunToFixPoint(int aggressiveness) {
    state_.aggressiveness = aggressiveness;
    from_group_.clear();
    from_operands_.clear();
    from_users_.clear();
    bool changed_last = true;
    int guard = 0;
    while (changed_last && guard++ < 1000) {
      changed_last = false;
      for (Computation* comp : state_.module->computations()) {
        const std::vector<Instruction*>& order = CachedPostOrder(*comp);
        for (Instruction* inst : order) {
          if (!state_.group_of.contains(inst) || from_group_.contains(inst)) continue;
          if (state_.provided.contains(inst)) continue;
          from_group_.insert(inst);
          if (InferFromGroup(*inst)) {
            changed_last = true;
            OnChange(*inst);
          }
        }
        for (Instruction* inst : order) {
          if (state_.open_dims.contains(inst) && internal::RefineOpenDims(*inst, state_)) {
            changed_last = true;
            OnChange(*inst);
          }
          if (from_operands_.contains(inst) || state_.provided.contains(inst)) continue;
          from_operands_.insert(inst);
          if (internal::InferFromOperands(*inst, state_)) {
            changed_last = true;
            OnChange(*inst);
          }
        }
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
          Instruction* inst = *it;
          if (from_users_.contains(inst) || state_.provided.contains(inst)) continue;
          from_users_.insert(inst);
          if (internal::InferFromUsers(*inst, state_)) {
            changed_last = true;
            OnChange(*inst);
          }
        }
      }
    }
  }

 private:
  State& state_;
  Cache from_group_, from_operands_, from_users_;
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> post_orders_;
};

// Every member of a shard_as group ends with one sharding: the merge of all
// of theirs if they are compatible, else the first non-replicated one.
void AlignShardAsGroups(State& state) {
  std::vector<int64_t> ids;
  for (const auto& [id, members] : state.shard_as) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (int64_t id : ids) {
    const auto& members = state.shard_as.at(id);
    std::optional<Sharding> fallback, common;
    bool compatible = true;
    for (const Instruction* m : members) {
      if (!m->has_sharding()) continue;
      const Sharding& s = *m->sharding();
      if (!fallback && !s.IsReplicated()) fallback = s;
      if (!common) {
        common = s;
      } else if (*common == s || s.IsReplicated()) {
      } else if (common->IsReplicated()) {
        common = s;
      } else if (std::optional<Sharding> merged = MergeCompatible(*common, s)) {
        common = *merged;
      } else {
        compatible = false;
      }
    }
    std::optional<Sharding> chosen = compatible ? common : fallback;
    if (!chosen) continue;
    for (Instruction* m : members) {
      if (m->sharding() != chosen) state.Set(*m, *chosen, nullptr, absl::StrCat("shard_as group ", id));
    }
  }
}

std::vector<bool> HeaderOr(const std::optional<std::vector<bool>>& option,
                           const std::vector<bool>& header) {
  return option ? *option : header;
}

}  // namespace

namespace {

absl::StatusOr<PropagationResult> PropagateWholeValues(Module& module,
                                                       const PropagationOptions& options) {
  RETURN_IF_ERROR(ValidateAnnotations(module));
  RETURN_IF_ERROR(CheckWhileChannelDevices(module));
  PropagationResult result;
  State state;
  state.module = &module;
  state.result = &result;
  state.allow_to_output = HeaderOr(options.allow_propagation_to_output,
                                   module.config().allow_spmd_sharding_propagation_to_output);
  state.allow_to_parameters = HeaderOr(options.allow_propagation_to_parameters,
                                       module.config().allow_spmd_sharding_propagation_to_parameters);
  RETURN_IF_ERROR(ProcessShardingInstructions(state));
  const internal::EntryShardings saved_entry = internal::SaveEntryShardings(module);

  // Callers, and the first sync of control-flow values.
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kCall ||
            inst->opcode() == Opcode::kConditional) {
          state.callers.emplace(callee, inst);
        }
      }
      if (inst->opcode() != Opcode::kWhile && inst->opcode() != Opcode::kCall &&
          inst->opcode() != Opcode::kConditional)
        continue;
      std::vector<Instruction*> related = RelatedTo(*inst);
      related.insert(related.begin(), inst);
      const Instruction* source = nullptr;
      for (const Instruction* r : related) {
        if (r->has_sharding()) {
          source = r;
          break;
        }
      }
      if (source == nullptr) continue;
      Sharding s = *source->sharding();
      for (Instruction* r : related) {
        if (r != source) state.Set(*r, s, source, "tied by control flow");
      }
    }
  }

  // The annotated (fixed) set.
  Instruction* root = module.entry()->root();
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding() || inst->sharding()->IsUnknown()) continue;
      const bool is_param = inst->opcode() == Opcode::kParameter;
      const bool fixed = (!is_param && inst != root) ||
                         (inst == root && !state.AllowToOutput()) ||
                         (is_param && comp == module.entry() && !state.AllowToParameters());
      if (fixed) state.provided.insert(inst);
      auto& p = result.provenance[state.Key(*inst)];
      if (p.how.empty()) p.how = "annotation";
    }
  }
  // The state an rng-bit-generator reads is replicated (XLA's
  // InferShardingFromUsers replicates whatever feeds one): fixed here, as an
  // annotation would be, so that forward inference does not split it again.
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kRngBitGenerator || inst->operand_count() != 1) continue;
      Instruction* seed = inst->operand(0);
      if (seed->has_sharding() || seed->opcode() == Opcode::kParameter) continue;
      state.Set(*seed, Sharding::Replicated(), inst, "rng-bit-generator state (replicated)");
      state.provided.insert(seed);
    }
  }
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (inst->has_sharding() && inst->sharding()->IsUnknown())
        inst->set_sharding(Sharding::Replicated());
    }
  }

  Driver driver(state);
  for (int a = 0; a <= 3; ++a) driver.RunToFixPoint(a);
  AlignShardAsGroups(state);
  driver.RunToFixPoint(3);

  internal::ApplyEntryRules(state, saved_entry);
  return result;
}

}  // namespace

// Propagation reasons about where whole values live: an unreduced
// annotation (spmd/unreduced.h) takes part as its reduced form, and the
// annotated instruction keeps its partial values afterwards.
absl::StatusOr<PropagationResult> PropagateShardings(Module& module,
                                                     const PropagationOptions& options) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  std::vector<std::pair<Instruction*, Sharding>> unreduced;
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (!inst->has_sharding() || !inst->sharding()->HasUnreduced()) continue;
      unreduced.emplace_back(inst, *inst->sharding());
      inst->set_sharding(ReducedForm(*inst->sharding()));
    }
  }
  absl::StatusOr<PropagationResult> result = PropagateWholeValues(module, options);
  for (auto& [inst, sharding] : unreduced) inst->set_sharding(sharding);
  return result;
}

absl::StatusOr<ShardingExplanation> ExplainShardingSteps(const Module& module,
                                                         const PropagationResult& result,
                                                         const std::string& name) {
  const Instruction* target = nullptr;
  for (const Computation* comp : module.computations()) {
    if (const Instruction* inst = comp->FindInstruction(name)) target = inst;
  }
  if (target == nullptr) {
    return absl::NotFoundError(absl::StrCat("no instruction named '", name, "' in the module"));
  }
  ShardingExplanation explanation;
  explanation.name = name;
  if (target->has_sharding()) explanation.sharding = target->sharding()->ToString();
  std::string current = absl::StrCat(target->parent()->name(), "/", target->name());
  absl::flat_hash_set<std::string> seen;
  for (int depth = 0; depth < 10000; ++depth) {
    ShardingExplanation::Step& step = explanation.steps.emplace_back();
    step.value = current;
    auto it = result.provenance.find(current);
    if (it == result.provenance.end()) break;
    const ShardingProvenance& p = it->second;
    step.how = p.how;
    step.aggressiveness = p.aggressiveness;
    step.from = p.from;
    if (p.from.empty() || !seen.insert(current).second) break;
    current = p.from;
  }
  return explanation;
}

absl::StatusOr<std::string> ExplainSharding(const Module& module, const PropagationResult& result,
                                            const std::string& name) {
  ASSIGN_OR_RETURN(ShardingExplanation explanation, ExplainShardingSteps(module, result, name));
  std::string out =
      absl::StrCat("%", name, " has sharding ",
                   explanation.sharding.empty() ? "(none)" : explanation.sharding, "\n");
  for (const ShardingExplanation::Step& step : explanation.steps) {
    if (step.how.empty()) {
      absl::StrAppend(&out, "  ", step.value,
                      ": no propagation step set it (no annotation reaches it)\n");
      break;
    }
    absl::StrAppend(&out, "  ", step.value, ": ", step.how);
    if (step.aggressiveness >= 0) {
      absl::StrAppend(&out, " (priority level ", step.aggressiveness, ")");
    }
    if (!step.from.empty()) absl::StrAppend(&out, " <- ", step.from);
    out += "\n";
  }
  return out;
}

}  // namespace sharc::spmd
