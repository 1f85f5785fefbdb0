// gather and scatter. A batched operand (with unbatched indices) gains a
// leading window dim taken whole; batched indices make the batch dim an
// operand/index batching dim pair (XLA's batching dims), so every slice
// gathers from or scatters into its own operand slice.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// Sets the attributes, leaving optional dim lists out when empty (as the
// text form does).
void SetAttributes(Instruction& inst, std::vector<Attribute> attributes) {
  for (Attribute& a : attributes) {
    const IntList* list = std::get_if<IntList>(&a.value);
    bool optional = a.name == "operand_batching_dims" || a.name == "start_indices_batching_dims" ||
                    a.name == "input_batching_dims" || a.name == "scatter_indices_batching_dims";
    if (optional && list != nullptr && list->empty()) {
      inst.remove_attr(a.name);
    } else {
      inst.set_attr(std::move(a.name), std::move(a.value));
    }
  }
}

absl::StatusOr<BatchedValue> BatchGather(const Instruction& inst,
                                         absl::Span<const BatchedValue> operands,
                                         BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const bool operand_batched = operands[0].batched.batched();
  const bool indices_batched = operands[1].batched.batched();
  if (indices_batched && operand_batched && b == 0) {
    return BatchedValue{EmptyBatch(e, inst.shape()), BatchTree::Leaf(true)};
  }
  const IntList& offset_dims = inst.attr_ints("offset_dims");
  const IntList& operand_batching = inst.attr_ints("operand_batching_dims");
  const IntList& index_batching = inst.attr_ints("start_indices_batching_dims");
  IntList slice_sizes = inst.attr_ints("slice_sizes");
  // Operand dims move up by one when the operand has the batch dim.
  const int64_t operand_shift = operand_batched ? 1 : 0;
  std::vector<Attribute> attributes = {
      {"collapsed_slice_dims", ShiftDims(inst.attr_ints("collapsed_slice_dims"), operand_shift)},
      {"start_index_map", ShiftDims(inst.attr_ints("start_index_map"), operand_shift)}};
  if (!indices_batched) {
    // Operand dim 0 is the first offset dim: it goes to output dim 0.
    slice_sizes.insert(slice_sizes.begin(), b);
    attributes.push_back({"offset_dims", PrependZero(offset_dims)});
    attributes.push_back({"operand_batching_dims", ShiftDims(operand_batching)});
  } else {
    // Index dim 0 is the first batch dim of the output, which the shifted
    // offset dims leave at output dim 0.
    attributes.push_back({"offset_dims", ShiftDims(offset_dims)});
    attributes.push_back({"index_vector_dim", inst.attr_int("index_vector_dim") + 1});
    if (operand_batched) {
      slice_sizes.insert(slice_sizes.begin(), 1);
      attributes.push_back({"operand_batching_dims", PrependZero(operand_batching)});
      attributes.push_back({"start_indices_batching_dims", PrependZero(index_batching)});
    } else {
      attributes.push_back({"operand_batching_dims", operand_batching});
      attributes.push_back({"start_indices_batching_dims", ShiftDims(index_batching)});
    }
  }
  attributes.push_back({"slice_sizes", std::move(slice_sizes)});
  auto gather = CloneWithOperands(inst, {operands[0].inst, operands[1].inst});
  gather->set_shape(BatchedShape(inst.shape(), b));
  gather->clear_sharding();
  SetAttributes(*gather, std::move(attributes));
  return BatchedValue{e.Add(std::move(gather)), BatchTree::Leaf(true)};
}

absl::StatusOr<BatchedValue> BatchScatter(const Instruction& inst,
                                          absl::Span<const BatchedValue> operands,
                                          BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const int64_t n = (inst.operand_count() - 1) / 2;
  const BatchedValue& indices = operands[static_cast<size_t>(n)];
  const bool indices_batched = indices.batched.batched();
  if (indices_batched && b == 0) {
    return BatchedValue{EmptyBatch(e, inst.shape()), BatchTree::Uniform(inst.shape(), true)};
  }
  // The result is batched whenever anything is; operands and updates all
  // carry the batch dim so that one scatter serves every slice.
  std::vector<Instruction*> new_operands;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (i == n) {
      new_operands.push_back(indices.inst);
      continue;
    }
    ASSIGN_OR_RETURN(Instruction * op, Materialize(e, operands[static_cast<size_t>(i)], b));
    new_operands.push_back(op);
  }
  const IntList& window_dims = inst.attr_ints("update_window_dims");
  const IntList& input_batching = inst.attr_ints("input_batching_dims");
  const IntList& index_batching = inst.attr_ints("scatter_indices_batching_dims");
  std::vector<Attribute> attributes = {
      {"inserted_window_dims", ShiftDims(inst.attr_ints("inserted_window_dims"))},
      {"scatter_dims_to_operand_dims", ShiftDims(inst.attr_ints("scatter_dims_to_operand_dims"))}};
  if (!indices_batched) {
    // Operand dim 0 is the first window dim: update dim 0 covers it whole.
    attributes.push_back({"update_window_dims", PrependZero(window_dims)});
    attributes.push_back({"input_batching_dims", ShiftDims(input_batching)});
  } else {
    // Update dim 0 is the first scatter dim, matching index dim 0.
    attributes.push_back({"update_window_dims", ShiftDims(window_dims)});
    attributes.push_back({"input_batching_dims", PrependZero(input_batching)});
    attributes.push_back({"scatter_indices_batching_dims", PrependZero(index_batching)});
    attributes.push_back({"index_vector_dim", inst.attr_int("index_vector_dim") + 1});
  }
  auto scatter = CloneWithOperands(inst, std::move(new_operands));
  BatchTree batched = BatchTree::Uniform(inst.shape(), true);
  scatter->set_shape(batched.Apply(inst.shape(), b));
  scatter->clear_sharding();
  SetAttributes(*scatter, std::move(attributes));
  return BatchedValue{e.Add(std::move(scatter)), std::move(batched)};
}

}  // namespace

void RegisterGatherScatterBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kGather, BatchGather);
  registry.Register(Opcode::kScatter, BatchScatter);
}

}  // namespace sharc::hlo
