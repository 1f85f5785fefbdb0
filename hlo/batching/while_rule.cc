// while: the loop runs once for all slices when its predicate is the same
// for every slice; the carried values the body makes batched are batched from
// the start (a fixpoint). A per-slice predicate instead loops while any slice
// wants to and lets each iteration update only the slices still running,
// which runs the body for finished slices and so needs side-effect-free code.
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {
namespace {

// A new computation of one parameter of `shape`, with an Emitter over it.
struct ComputationBuilder {
  ComputationBuilder(std::string name, const Shape& shape, const Instruction& origin)
      : computation(std::make_unique<Computation>(std::move(name))), emitter(computation.get()) {
    emitter.set_origin(&origin);
    parameter = emitter.Add(Instruction::CreateParameter(0, "state", shape), true);
  }
  std::unique_ptr<Computation> computation;
  Emitter emitter;
  Instruction* parameter;
};

Computation* OrComputation(BatchingContext& ctx) {
  auto c = std::make_unique<Computation>("or");
  const Shape pred = Shape::Scalar(PrimitiveType::kPred);
  Instruction* a = c->AddInstruction(Instruction::CreateParameter(0, "a", pred));
  Instruction* b = c->AddInstruction(Instruction::CreateParameter(1, "b", pred));
  c->set_root(c->AddInstruction(Instruction::Create(Opcode::kOr, "or", pred, {a, b})));
  return ctx.AddComputation(std::move(c));
}

// While with a per-slice predicate: loop while any slice wants to, and let
// each iteration update only the slices whose predicate still holds.
absl::StatusOr<BatchedValue> BatchWhileWithBatchedPredicate(const Instruction& inst,
                                                            const BatchedValue& init,
                                                            BatchingContext& ctx) {
  const Computation& condition = *inst.attr_computation("condition");
  const Computation& body = *inst.attr_computation("body");
  if (HasSideEffects(body) || HasSideEffects(condition)) {
    return CannotBatch(inst,
                       "its predicate differs between slices, which needs running the body "
                       "for slices that have finished, and the body has side effects");
  }
  const int64_t b = ctx.batch_size();
  const BatchTree all = BatchTree::Uniform(inst.shape(), true);
  const BatchTree pred = BatchTree::Leaf(true);
  ASSIGN_OR_RETURN(BatchedComputation cond_b, ctx.BatchCallee(condition, {all}, &pred));
  ASSIGN_OR_RETURN(BatchedComputation body_b, ctx.BatchCallee(body, {all}, &all));
  const Shape state = all.Apply(inst.shape(), b);
  Computation* or_computation = OrComputation(ctx);

  ComputationBuilder any(absl::StrCat(condition.name(), ".any"), state, inst);
  Instruction* wants = CallComputation(any.emitter, cond_b.computation, {any.parameter});
  Instruction* none = ScalarConstant(any.emitter, PrimitiveType::kPred, 0);
  any.computation->set_root(
      any.emitter.Add(Opcode::kReduce, Shape::Scalar(PrimitiveType::kPred), {wants, none},
                      {{"dimensions", IntList{0}}, {"to_apply", or_computation}}));
  Computation* new_condition = ctx.AddComputation(std::move(any.computation));

  ComputationBuilder step(absl::StrCat(body.name(), ".masked"), state, inst);
  Instruction* active = CallComputation(step.emitter, cond_b.computation, {step.parameter});
  Instruction* next = CallComputation(step.emitter, body_b.computation, {step.parameter});
  step.computation->set_root(SelectLeaves(step.emitter, active, next, step.parameter));
  Computation* new_body = ctx.AddComputation(std::move(step.computation));

  Emitter& e = ctx.emitter();
  ASSIGN_OR_RETURN(Instruction * start, Materialize(e, init, b));
  auto loop = CloneWithOperands(inst, {start});
  loop->set_shape(state);
  loop->clear_sharding();
  loop->set_attr("condition", new_condition);
  loop->set_attr("body", new_body);
  return BatchedValue{e.Add(std::move(loop)), all};
}

absl::StatusOr<BatchedValue> BatchWhile(const Instruction& inst,
                                        absl::Span<const BatchedValue> operands,
                                        BatchingContext& ctx) {
  const Computation& condition = *inst.attr_computation("condition");
  const Computation& body = *inst.attr_computation("body");
  // Fixpoint: a carried value the body makes batched must be batched from
  // the first iteration on. Each round adds a leaf, so it ends.
  BatchTree carried = operands[0].batched;
  while (true) {
    ASSIGN_OR_RETURN(BatchedComputation free, ctx.BatchCallee(body, {carried}, nullptr));
    if (free.result.IsSubsetOf(carried)) break;
    carried = carried.Union(free.result);
  }
  ASSIGN_OR_RETURN(BatchedComputation cond_b, ctx.BatchCallee(condition, {carried}, nullptr));
  if (cond_b.result.batched()) return BatchWhileWithBatchedPredicate(inst, operands[0], ctx);
  ASSIGN_OR_RETURN(BatchedComputation body_b, ctx.BatchCallee(body, {carried}, &carried));
  Emitter& e = ctx.emitter();
  ASSIGN_OR_RETURN(Instruction * start, MaterializeAs(e, operands[0], carried, ctx.batch_size()));
  auto loop = CloneWithOperands(inst, {start});
  loop->set_shape(carried.Apply(inst.shape(), ctx.batch_size()));
  loop->clear_sharding();
  loop->set_attr("condition", cond_b.computation);
  loop->set_attr("body", body_b.computation);
  return BatchedValue{e.Add(std::move(loop)), carried};
}

}  // namespace

void RegisterWhileBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kWhile, BatchWhile);
}

}  // namespace sharc::hlo
