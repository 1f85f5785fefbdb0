// reduce, reduce-window (also variadic) and select-and-scatter: the batch
// dim is one more kept dim (a window of size 1 for the windowed ops).
// Reducers, select and scatter functions act on scalars, so they stay as
// they are.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// The `n` batched inputs followed by the (unbatched) init values.
absl::StatusOr<std::vector<Instruction*>> ReductionOperands(const Instruction& inst,
                                                            absl::Span<const BatchedValue> operands,
                                                            size_t n, BatchingContext& ctx) {
  for (size_t i = n; i < operands.size(); ++i) {
    if (operands[i].batched.Any()) {
      // A per-slice init cannot be expressed with one scalar init, and
      // folding it in as an element would apply it twice.
      return CannotBatch(inst,
                         "its init value differs between slices (it depends on a batched "
                         "value); use a constant init value and combine the per-slice value "
                         "with the result instead");
    }
  }
  ASSIGN_OR_RETURN(std::vector<Instruction*> out,
                   MaterializeAll(ctx.emitter(), operands.subspan(0, n), ctx.batch_size()));
  for (size_t i = n; i < operands.size(); ++i) out.push_back(operands[i].inst);
  return out;
}

BatchedValue Rebuild(const Instruction& inst, std::vector<Instruction*> operands,
                     Attribute attribute, BatchingContext& ctx) {
  auto batched = CloneWithOperands(inst, std::move(operands));
  BatchTree tree = BatchTree::Uniform(inst.shape(), true);
  batched->set_shape(tree.Apply(inst.shape(), ctx.batch_size()));
  batched->clear_sharding();
  batched->set_attr(std::move(attribute.name), std::move(attribute.value));
  return BatchedValue{ctx.emitter().Add(std::move(batched)), std::move(tree)};
}

absl::StatusOr<BatchedValue> BatchReduce(const Instruction& inst,
                                         absl::Span<const BatchedValue> operands,
                                         BatchingContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> new_operands,
                   ReductionOperands(inst, operands, operands.size() / 2, ctx));
  return Rebuild(inst, std::move(new_operands),
                 {"dimensions", ShiftDims(inst.attr_ints("dimensions"))}, ctx);
}

absl::StatusOr<BatchedValue> BatchWindowed(const Instruction& inst,
                                               absl::Span<const BatchedValue> operands,
                                               BatchingContext& ctx) {
  // reduce-window's inputs, or select-and-scatter's operand and source.
  const size_t n =
      inst.opcode() == Opcode::kSelectAndScatter ? 2 : operands.size() / 2;
  ASSIGN_OR_RETURN(std::vector<Instruction*> new_operands,
                   ReductionOperands(inst, operands, n, ctx));
  // size 1, stride 1, no padding, no dilation (a scalar's window is left out).
  IntListList window = {{1, 1, 0, 0, 1, 1}};
  if (inst.has_attr("window")) {
    for (const std::vector<int64_t>& w : inst.attr_int_lists("window")) window.push_back(w);
  }
  return Rebuild(inst, std::move(new_operands), {"window", std::move(window)}, ctx);
}

}  // namespace

void RegisterReductionBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kReduce, BatchReduce);
  registry.Register(Opcode::kReduceWindow, BatchWindowed);
  registry.Register(Opcode::kSelectAndScatter, BatchWindowed);
}

}  // namespace sharc::hlo
