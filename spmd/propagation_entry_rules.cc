// The end of propagation for the entry's parameters and root (XLA's
// ShardingPropagation::Run, after its fix point). The header's
// allow_spmd_sharding_propagation_to_output / _to_parameters may give one
// flag per root tuple element / parameter; propagation runs as if any
// `true` freed them all, and then:
//   - a root element or parameter whose flag is false gets back the
//     sharding it was written with (a parameter written with none loses
//     what propagation gave it);
//   - one whose flag is true and whose propagated tiling does not divide
//     its shape evenly is returned replicated.
//
//   allow_spmd_sharding_propagation_to_parameters={false,true}
//   %p0 = f32[4] parameter(0), sharding={replicated}      -> stays {replicated}
//   %p1 = f32[4] parameter(1), sharding={replicated}      -> {devices=[4]0,1,2,3}
//   %p2 = f32[3] parameter(2)   (flag true, f32[3] over 4) -> {replicated}
//   ROOT %add = f32[4] add(...), sharding={devices=[4]0,1,2,3}
#include "spmd/propagation_internal.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd::internal {

using hlo::Instruction;
using hlo::Sharding;

namespace {

bool Flag(const std::vector<bool>& flags, size_t i) {
  return flags.size() == 1 ? flags[0] : flags[i];
}

// EvenlyDivides for a leaf or a tuple of leaves.
bool EvenlyPartitions(const hlo::Shape& shape, const Sharding& sharding) {
  if (!shape.is_tuple()) return !shape.is_array() || EvenlyDivides(shape, sharding);
  std::vector<Sharding> leaves = sharding.LeavesFor(shape);
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    if (!EvenlyPartitions(shape.tuple_shape(i), leaves[static_cast<size_t>(i)])) return false;
  }
  return true;
}

}  // namespace

EntryShardings SaveEntryShardings(const hlo::Module& module) {
  EntryShardings saved;
  const Instruction* root = module.entry()->root();
  if (root->shape().is_tuple() && root->has_sharding()) {
    saved.root_leaves = root->sharding()->LeavesFor(root->shape());
  }
  const std::vector<Instruction*>& params = module.entry()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i]->has_sharding()) saved.params.emplace(static_cast<int64_t>(i), *params[i]->sharding());
  }
  return saved;
}

void ApplyEntryRules(State& state, const EntryShardings& saved) {
  Instruction* root = state.module->entry()->root();
  const std::vector<Instruction*>& params = state.module->entry()->parameters();
  const std::vector<bool>& to_output = state.allow_to_output;
  const std::vector<bool>& to_params = state.allow_to_parameters;
  const bool one_tuple_param = params.size() == 1 && params[0]->shape().is_tuple() &&
                               static_cast<int64_t>(to_params.size()) == params[0]->shape().tuple_size();

  // Flags that are false restore what was written.
  if (state.AllowToOutput() && root->has_sharding() && !saved.root_leaves.empty() &&
      saved.root_leaves.size() == to_output.size()) {
    std::vector<Sharding> leaves = root->sharding()->LeavesFor(root->shape());
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!to_output[i] && !saved.root_leaves[i].IsUnknown()) leaves[i] = saved.root_leaves[i];
    }
    state.Set(*root, Sharding::Tuple(leaves), nullptr, "root element not allowed to change");
  }
  if (state.AllowToParameters() && to_params.size() == params.size()) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (to_params[i]) continue;
      auto it = saved.params.find(static_cast<int64_t>(i));
      if (it != saved.params.end() && !it->second.IsUnknown()) {
        state.Set(*params[i], it->second, nullptr, "parameter not allowed to change");
      } else {
        params[i]->clear_sharding();
      }
    }
  } else if (state.AllowToParameters() && one_tuple_param && params[0]->has_sharding() &&
             saved.params.count(0)) {
    const hlo::Shape& shape = params[0]->shape();
    std::vector<Sharding> leaves = params[0]->sharding()->LeavesFor(shape);
    std::vector<Sharding> written = saved.params.at(0).LeavesFor(shape);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!to_params[i] && !written[i].IsUnknown()) leaves[i] = written[i];
    }
    state.Set(*params[0], Sharding::Tuple(leaves), nullptr, "parameter element not allowed to change");
  }

  // Flags that are true: an uneven tiling falls back to replicated.
  if (state.AllowToOutput() && root->has_sharding()) {
    if (!root->shape().is_tuple()) {
      if (!EvenlyPartitions(root->shape(), *root->sharding())) {
        state.Set(*root, Sharding::Replicated(), nullptr, "uneven entry root falls back to replicated");
      }
    } else if (static_cast<int64_t>(to_output.size()) == root->shape().tuple_size()) {
      std::vector<Sharding> leaves = root->sharding()->LeavesFor(root->shape());
      bool changed = false;
      for (int64_t i = 0; i < root->shape().tuple_size(); ++i) {
        const size_t k = static_cast<size_t>(i);
        if (to_output[k] && !EvenlyPartitions(root->shape().tuple_shape(i), leaves[k])) {
          leaves[k] = Sharding::Replicated();
          changed = true;
        }
      }
      if (changed) state.Set(*root, Sharding::Tuple(leaves), nullptr, "uneven entry root element");
    }
  }
  if (!state.AllowToParameters()) return;
  if (to_params.size() == params.size() || to_params.size() == 1) {
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i]->has_sharding() && Flag(to_params, i) &&
          !EvenlyPartitions(params[i]->shape(), *params[i]->sharding())) {
        state.Set(*params[i], Sharding::Replicated(), nullptr, "uneven entry parameter falls back to replicated");
      }
    }
  } else if (one_tuple_param && params[0]->has_sharding()) {
    const hlo::Shape& shape = params[0]->shape();
    std::vector<Sharding> leaves = params[0]->sharding()->LeavesFor(shape);
    bool changed = false;
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (to_params[i] && !EvenlyPartitions(shape.tuple_shape(static_cast<int64_t>(i)), leaves[i])) {
        leaves[i] = Sharding::Replicated();
        changed = true;
      }
    }
    if (changed) state.Set(*params[0], Sharding::Tuple(leaves), nullptr, "uneven entry parameter element");
  }
}

}  // namespace sharc::spmd::internal
