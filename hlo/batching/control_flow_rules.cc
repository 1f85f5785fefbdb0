// Tuples and call: values pass through with their batching, and a called
// computation is batched for the batching of its operands (while and
// conditional have their own files).
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<BatchedValue> BatchTuple(const Instruction& inst,
                                        absl::Span<const BatchedValue> operands,
                                        BatchingContext& ctx) {
  std::vector<Instruction*> elements;
  std::vector<BatchTree> trees;
  for (const BatchedValue& v : operands) {
    elements.push_back(v.inst);
    trees.push_back(v.batched);
  }
  Instruction* tuple = MakeTuple(ctx.emitter(), std::move(elements));
  return BatchedValue{tuple, BatchTree::Tuple(std::move(trees))};
}

absl::StatusOr<BatchedValue> BatchGetTupleElement(const Instruction& inst,
                                                  absl::Span<const BatchedValue> operands,
                                                  BatchingContext& ctx) {
  const int64_t index = inst.attr_int("index");
  return BatchedValue{GetTupleElement(ctx.emitter(), operands[0].inst, index),
                      operands[0].batched.element(index)};
}

absl::StatusOr<BatchedValue> BatchCall(const Instruction& inst,
                                       absl::Span<const BatchedValue> operands,
                                       BatchingContext& ctx) {
  std::vector<BatchTree> params;
  std::vector<Instruction*> args;
  for (const BatchedValue& v : operands) {
    params.push_back(v.batched);
    args.push_back(v.inst);
  }
  ASSIGN_OR_RETURN(BatchedComputation callee,
                   ctx.BatchCallee(*inst.attr_computation("to_apply"), std::move(params), nullptr));
  auto call = CloneWithOperands(inst, std::move(args));
  call->set_shape(callee.result.Apply(inst.shape(), ctx.batch_size()));
  call->clear_sharding();
  call->set_attr("to_apply", callee.computation);
  return BatchedValue{ctx.emitter().Add(std::move(call)), callee.result};
}

}  // namespace

void RegisterControlFlowBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kTuple, BatchTuple);
  registry.Register(Opcode::kGetTupleElement, BatchGetTupleElement);
  registry.Register(Opcode::kCall, BatchCall);
}

}  // namespace sharc::hlo
