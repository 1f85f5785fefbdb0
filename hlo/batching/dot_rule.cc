// dot: when both sides are batched the batch dim becomes one more dot batch
// dim, which dot puts first; when one side is, it is a free dim of that side,
// which dot puts after the batch dims (and, for rhs, after lhs's free dims),
// so a transpose brings it back to dim 0.
//
// ragged-dot: every operand is batched (an unbatched one broadcast) and the
// batch dim becomes the first batch dim of both sides; the group sizes
// become [batch, ..., g], one size list per batch index (XLA's prefix form).
// The result has it first, except in contracting mode, where the group dim
// leads and a transpose brings the batch dim back to the front.
#include <algorithm>

#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<BatchedValue> BatchDot(const Instruction& inst,
                                      absl::Span<const BatchedValue> operands,
                                      BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const bool lhs_batched = operands[0].batched.batched();
  const bool rhs_batched = operands[1].batched.batched();
  const IntList& lhs_batch = inst.attr_ints("lhs_batch_dims");
  const IntList& rhs_batch = inst.attr_ints("rhs_batch_dims");
  const IntList& lhs_contracting = inst.attr_ints("lhs_contracting_dims");
  const IntList& rhs_contracting = inst.attr_ints("rhs_contracting_dims");
  const int64_t num_batch = static_cast<int64_t>(lhs_batch.size());
  const Shape& lhs = inst.operand(0)->shape();
  const int64_t lhs_free = lhs.rank() - num_batch - static_cast<int64_t>(lhs_contracting.size());

  auto dot = CloneWithOperands(inst, {operands[0].inst, operands[1].inst});
  dot->clear_sharding();
  // Where the new dim lands in the dot's result.
  int64_t position = 0;
  if (lhs_batched && rhs_batched) {
    dot->set_attr("lhs_batch_dims", PrependZero(lhs_batch));
    dot->set_attr("rhs_batch_dims", PrependZero(rhs_batch));
  } else if (lhs_batched) {
    // Operand dim 0 is the first lhs free dim.
    dot->set_attr("lhs_batch_dims", ShiftDims(lhs_batch));
    position = num_batch;
  } else {
    position = num_batch + lhs_free;
  }
  if (lhs_batched) dot->set_attr("lhs_contracting_dims", ShiftDims(lhs_contracting));
  if (rhs_batched) {
    if (!lhs_batched) dot->set_attr("rhs_batch_dims", ShiftDims(rhs_batch));
    dot->set_attr("rhs_contracting_dims", ShiftDims(rhs_contracting));
  }
  // Dim lists the original left out stay out when empty.
  for (const char* name :
       {"lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims", "rhs_contracting_dims"}) {
    if (!inst.has_attr(name) && dot->attr_ints(name).empty()) dot->remove_attr(name);
  }
  std::vector<int64_t> dims = inst.shape().dims();
  dims.insert(dims.begin() + position, b);
  dot->set_shape(Shape(inst.shape().type(), std::move(dims)));
  Instruction* result = MoveDimToFront(e, e.Add(std::move(dot)), position);
  return BatchedValue{result, BatchTree::Leaf(true)};
}

absl::StatusOr<BatchedValue> BatchRaggedDot(const Instruction& inst,
                                            absl::Span<const BatchedValue> operands,
                                            BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched,
                   MaterializeAll(e, operands, ctx.batch_size()));
  auto dot = CloneWithOperands(inst, batched);
  dot->clear_sharding();
  dot->set_attr("lhs_batch_dims", PrependZero(inst.attr_ints("lhs_batch_dims")));
  dot->set_attr("rhs_batch_dims", PrependZero(inst.attr_ints("rhs_batch_dims")));
  for (const char* name : {"lhs_contracting_dims", "rhs_contracting_dims", "lhs_ragged_dims",
                           "rhs_group_dims"}) {
    if (inst.has_attr(name)) dot->set_attr(name, ShiftDims(inst.attr_ints(name)));
  }
  const IntList& contracting = inst.attr_ints("lhs_contracting_dims");
  const IntList& ragged = inst.attr_ints("lhs_ragged_dims");
  const bool contracting_mode =
      !ragged.empty() &&
      std::find(contracting.begin(), contracting.end(), ragged[0]) != contracting.end();
  const int64_t position = contracting_mode ? 1 : 0;
  std::vector<int64_t> dims = inst.shape().dims();
  dims.insert(dims.begin() + position, ctx.batch_size());
  dot->set_shape(Shape(inst.shape().type(), std::move(dims)));
  Instruction* result = MoveDimToFront(e, e.Add(std::move(dot)), position);
  return BatchedValue{result, BatchTree::Leaf(true)};
}

}  // namespace

void RegisterDotBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kDot, BatchDot);
  registry.Register(Opcode::kRaggedDot, BatchRaggedDot);
}

}  // namespace sharc::hlo
