// The vmap driver: batches a computation instruction by instruction with the
// rule table, recursing into called computations on demand (cached per
// signature), then drops helper computations that ended up unused (a while
// loop's fixpoint may batch its body more than once).
#include "hlo/batching/vmap.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_sharding.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// State shared by the batchers of f and of every computation it calls.
struct VmapState {
  Module& module;
  const VmapOptions& options;
  int64_t batch_size;
  absl::flat_hash_set<std::string> computation_names;
  absl::flat_hash_map<std::string, BatchedComputation> cache;
  std::vector<Computation*> created;

  std::string UniqueComputationName(const std::string& base) {
    std::string name = base;
    for (int64_t i = 1; computation_names.contains(name); ++i) name = absl::StrCat(base, ".", i);
    computation_names.insert(name);
    return name;
  }
  Computation* Add(std::unique_ptr<Computation> computation) {
    Computation* raw = module.AddComputation(std::move(computation));
    created.push_back(raw);
    return raw;
  }
};

absl::StatusOr<BatchedComputation> BatchComputation(VmapState& state, const Computation& source,
                                                    const std::string& name,
                                                    std::vector<BatchTree> params,
                                                    const BatchTree* result);

class ComputationBatcher : public BatchingContext {
 public:
  ComputationBatcher(VmapState& state, Computation* target) : state_(state), emitter_(target) {}

  int64_t batch_size() const override { return state_.batch_size; }
  const VmapOptions& options() const override { return state_.options; }
  Emitter& emitter() override { return emitter_; }
  BatchedValue Parameter(int64_t number) const override {
    return parameters_[static_cast<size_t>(number)];
  }
  absl::StatusOr<BatchedComputation> BatchCallee(const Computation& callee,
                                                 std::vector<BatchTree> params,
                                                 const BatchTree* result) override {
    std::string key = absl::StrCat(reinterpret_cast<uintptr_t>(&callee), "|");
    for (const BatchTree& p : params) absl::StrAppend(&key, p.ToString(), ";");
    absl::StrAppend(&key, "|", result != nullptr ? result->ToString() : "free");
    auto it = state_.cache.find(key);
    if (it != state_.cache.end()) return it->second;
    ASSIGN_OR_RETURN(
        BatchedComputation batched,
        BatchComputation(state_, callee, callee.name() + ".batched", std::move(params), result));
    state_.cache[key] = batched;
    return batched;
  }
  Computation* AddComputation(std::unique_ptr<Computation> computation) override {
    computation->set_name(state_.UniqueComputationName(computation->name()));
    return state_.Add(std::move(computation));
  }

  // Fills the target computation; returns how its root is batched.
  absl::StatusOr<BatchTree> Run(const Computation& source, const std::vector<BatchTree>& params,
                                const BatchTree* result);

 private:
  absl::StatusOr<BatchedValue> BatchInstruction(const Instruction& inst);

  VmapState& state_;
  Emitter emitter_;
  std::vector<BatchedValue> parameters_;
  absl::flat_hash_map<const Instruction*, BatchedValue> values_;
};

absl::StatusOr<BatchedValue> ComputationBatcher::BatchInstruction(const Instruction& inst) {
  const BatchingRule* rule = FindBatchingRule(inst.opcode());
  if (rule == nullptr) return CannotBatch(inst, "the op has no batching rule");
  if (!rule->unsupported_reason.empty()) return CannotBatch(inst, rule->unsupported_reason);
  std::vector<BatchedValue> operands;
  bool any_batched = false;
  for (const Instruction* op : inst.operands()) {
    operands.push_back(values_.at(op));
    any_batched |= operands.back().batched.Any();
  }
  emitter_.set_origin(&inst);
  if (!any_batched && !rule->apply_to_unbatched) {
    // Same value for every slice: compute it once.
    std::vector<Instruction*> new_operands;
    for (const BatchedValue& v : operands) new_operands.push_back(v.inst);
    Instruction* copy =
        emitter_.Add(CloneWithOperands(inst, std::move(new_operands)), /*keep_name=*/false);
    emitter_.Claim(copy, inst.name());
    return BatchedValue{copy, BatchTree::Uniform(inst.shape(), false)};
  }
  const size_t first_new = emitter_.added().size();
  ASSIGN_OR_RETURN(BatchedValue value, rule->batch(inst, operands, *this));
  const Shape expected = value.batched.Apply(inst.shape(), state_.batch_size);
  if (value.inst->shape() != expected) {
    return absl::InternalError(absl::StrCat("batching rule of ", OpcodeName(inst.opcode()),
                                            " produced ", value.inst->shape().ToString(),
                                            ", expected ", expected.ToString(), ", in ",
                                            inst.Describe()));
  }
  // Only an instruction this rule created takes the original's name and
  // sharding (a rule may also return an existing value, e.g. a parameter).
  const std::vector<Instruction*>& added = emitter_.added();
  const bool created = std::find(added.begin() + static_cast<std::ptrdiff_t>(first_new),
                                 added.end(), value.inst) != added.end();
  if (created) {
    emitter_.Claim(value.inst, inst.name());
    if (inst.sharding().has_value()) {
      ASSIGN_OR_RETURN(Sharding sharding,
                       BatchSharding(*inst.sharding(), inst.shape(), value.batched,
                                     state_.batch_size, state_.options));
      value.inst->set_sharding(std::move(sharding));
    }
  }
  return value;
}

absl::StatusOr<BatchTree> ComputationBatcher::Run(const Computation& source,
                                                  const std::vector<BatchTree>& params,
                                                  const BatchTree* result) {
  if (static_cast<int64_t>(params.size()) != source.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("vmap of '", source.name(), "' got ",
                                                   params.size(), " batching flags for ",
                                                   source.num_parameters(), " parameters"));
  }
  for (const Instruction* inst : source.instructions()) emitter_.Reserve(inst->name());
  for (int64_t i = 0; i < source.num_parameters(); ++i) {
    const Instruction* param = source.parameter(i);
    if (param == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", source.name(), "' has no parameter ", i));
    }
    const BatchTree& tree = params[static_cast<size_t>(i)];
    auto copy = CloneWithOperands(*param, {});
    copy->set_shape(tree.Apply(param->shape(), state_.batch_size));
    if (param->sharding().has_value()) {
      ASSIGN_OR_RETURN(Sharding sharding, BatchSharding(*param->sharding(), param->shape(), tree,
                                                        state_.batch_size, state_.options));
      copy->set_sharding(std::move(sharding));
    }
    emitter_.set_origin(param);
    Instruction* added = emitter_.Add(std::move(copy));
    emitter_.Claim(added, param->name());
    parameters_.push_back(BatchedValue{added, tree});
  }
  for (const Instruction* inst : source.instructions()) {
    ASSIGN_OR_RETURN(BatchedValue value, BatchInstruction(*inst));
    values_[inst] = std::move(value);
  }
  if (source.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation '", source.name(), "' has no root"));
  }
  BatchedValue root = values_.at(source.root());
  emitter_.set_origin(source.root());
  if (result != nullptr) {
    if (!root.batched.IsSubsetOf(*result)) {
      return absl::InternalError(absl::StrCat("computation '", source.name(), "' batches ",
                                              root.batched.ToString(), ", more than the ",
                                              result->ToString(), " its caller requires"));
    }
    ASSIGN_OR_RETURN(root.inst, MaterializeAs(emitter_, root, *result, state_.batch_size));
    root.batched = *result;
  }
  emitter_.computation()->set_root(root.inst);
  return root.batched;
}

absl::StatusOr<BatchedComputation> BatchComputation(VmapState& state, const Computation& source,
                                                    const std::string& name,
                                                    std::vector<BatchTree> params,
                                                    const BatchTree* result) {
  auto target = std::make_unique<Computation>(state.UniqueComputationName(name));
  ComputationBatcher batcher(state, target.get());
  BatchedComputation out;
  ASSIGN_OR_RETURN(out.result, batcher.Run(source, params, result));
  // Added only now so that callees precede their callers in the module.
  out.computation = state.Add(std::move(target));
  return out;
}

void CollectReachable(const Computation* computation,
                      absl::flat_hash_set<const Computation*>& reachable) {
  if (!reachable.insert(computation).second) return;
  for (const Instruction* inst : computation->instructions()) {
    for (const Computation* callee : inst->called_computations()) {
      CollectReachable(callee, reachable);
    }
  }
}

}  // namespace

absl::StatusOr<Computation*> Vmap(Module& module, const Computation& f,
                                  absl::Span<const bool> batched_params, int64_t batch_size,
                                  std::string_view name, const VmapOptions& options) {
  if (batch_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("vmap batch size must be >= 0, got ", batch_size));
  }
  if (f.parent() != &module) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vmap of '", f.name(), "': the computation is not part of module '", module.name(), "'"));
  }
  if (static_cast<int64_t>(batched_params.size()) != f.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat("vmap of '", f.name(), "' got ",
                                                   batched_params.size(), " batching flags for ",
                                                   f.num_parameters(), " parameters"));
  }
  VmapState state{module, options, batch_size, {}, {}, {}};
  for (const Computation* c : module.computations()) state.computation_names.insert(c->name());
  std::vector<BatchTree> params;
  for (int64_t i = 0; i < f.num_parameters(); ++i) {
    if (f.parameter(i) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", f.name(), "' has no parameter ", i));
    }
    params.push_back(BatchTree::Uniform(f.parameter(i)->shape(), batched_params[i]));
  }
  if (f.root() == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("computation '", f.name(), "' has no root"));
  }
  BatchTree all = BatchTree::Uniform(f.root()->shape(), true);
  absl::StatusOr<BatchedComputation> result =
      BatchComputation(state, f, std::string(name), std::move(params), &all);
  // Drop what the result does not use (everything, on failure).
  absl::flat_hash_set<const Computation*> reachable;
  if (result.ok()) CollectReachable(result->computation, reachable);
  for (Computation* c : state.created) {
    if (!reachable.contains(c)) module.RemoveComputation(c);
  }
  if (!result.ok()) return result.status();
  return result->computation;
}

}  // namespace sharc::hlo
