// conditional: with a selector that is the same for every slice, one branch
// runs for all slices, so every branch is batched to return the same
// batching. A per-slice selector runs every branch on every slice and keeps
// each slice's choice with selects (side-effect-free branches only).
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {
namespace {

std::vector<Computation*> Branches(const Instruction& inst) {
  if (inst.has_attr("true_computation")) {
    return {inst.attr_computation("true_computation"), inst.attr_computation("false_computation")};
  }
  return inst.attr_computations("branch_computations");
}

void SetBranches(Instruction& inst, const std::vector<Computation*>& branches) {
  if (inst.has_attr("true_computation")) {
    inst.set_attr("true_computation", branches[0]);
    inst.set_attr("false_computation", branches[1]);
  } else {
    inst.set_attr("branch_computations", branches);
  }
}

// Per-slice selector: every branch runs on every slice; selects keep the
// branch each slice chose (XLA runs the last branch for an out-of-range
// index, so such indices pick the last branch).
absl::StatusOr<BatchedValue> BatchConditionalWithBatchedSelector(
    const Instruction& inst, absl::Span<const BatchedValue> operands, BatchingContext& ctx) {
  const std::vector<Computation*> branches = Branches(inst);
  for (const Computation* branch : branches) {
    if (HasSideEffects(*branch)) {
      return CannotBatch(inst, absl::StrCat("its selector differs between slices, which needs "
                                            "running every branch, and branch '",
                                            branch->name(), "' has side effects"));
    }
  }
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const BatchTree all = BatchTree::Uniform(inst.shape(), true);
  std::vector<Instruction*> results;
  for (size_t i = 0; i < branches.size(); ++i) {
    const BatchedValue& arg = operands[i + 1];
    ASSIGN_OR_RETURN(BatchedComputation branch, ctx.BatchCallee(*branches[i], {arg.batched}, &all));
    results.push_back(CallComputation(e, branch.computation, {arg.inst}));
  }
  Instruction* selector = operands[0].inst;
  if (selector->shape().type() == PrimitiveType::kPred) {
    return BatchedValue{SelectLeaves(e, selector, results[0], results[1]), all};
  }
  const int64_t n = static_cast<int64_t>(branches.size());
  const PrimitiveType s32 = PrimitiveType::kS32;
  const Shape index_shape(s32, {b});
  auto splat = [&](int64_t value) {
    return Broadcast(e, ScalarConstant(e, s32, value), index_shape, {});
  };
  Instruction* in_range =
      e.Add(Opcode::kAnd, Shape(PrimitiveType::kPred, {b}),
            {Compare(e, selector, splat(0), "GE"), Compare(e, selector, splat(n), "LT")});
  Instruction* index = e.Add(Opcode::kSelect, index_shape, {in_range, selector, splat(n - 1)});
  Instruction* result = results.back();
  for (int64_t k = n - 2; k >= 0; --k) {
    result =
        SelectLeaves(e, Compare(e, index, splat(k), "EQ"), results[static_cast<size_t>(k)], result);
  }
  return BatchedValue{result, all};
}

absl::StatusOr<BatchedValue> BatchConditional(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  if (operands[0].batched.batched()) {
    return BatchConditionalWithBatchedSelector(inst, operands, ctx);
  }
  // One branch runs for all slices; every branch must return the result
  // batched the same way, the union of what each makes of it.
  const std::vector<Computation*> branches = Branches(inst);
  BatchTree result = BatchTree::Uniform(inst.shape(), false);
  for (size_t i = 0; i < branches.size(); ++i) {
    ASSIGN_OR_RETURN(BatchedComputation branch,
                     ctx.BatchCallee(*branches[i], {operands[i + 1].batched}, nullptr));
    result = result.Union(branch.result);
  }
  std::vector<Computation*> batched_branches;
  std::vector<Instruction*> args;
  args.push_back(operands[0].inst);
  for (size_t i = 0; i < branches.size(); ++i) {
    ASSIGN_OR_RETURN(BatchedComputation branch,
                     ctx.BatchCallee(*branches[i], {operands[i + 1].batched}, &result));
    batched_branches.push_back(branch.computation);
    args.push_back(operands[i + 1].inst);
  }
  auto conditional = CloneWithOperands(inst, std::move(args));
  conditional->set_shape(result.Apply(inst.shape(), ctx.batch_size()));
  conditional->clear_sharding();
  SetBranches(*conditional, batched_branches);
  return BatchedValue{ctx.emitter().Add(std::move(conditional)), result};
}

}  // namespace

void RegisterConditionalBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kConditional, BatchConditional);
}

}  // namespace sharc::hlo
