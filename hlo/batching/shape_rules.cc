// Shape and data-movement ops whose batch dim simply rides along as a new
// leading dim: broadcast, reshape, transpose, slice, pad, concatenate and
// reverse. Their dimension attributes shift by one.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// The op over new operands with the batched result shape and `attributes`
// replacing the originals of the same name.
BatchedValue Rebuild(const Instruction& inst, std::vector<Instruction*> operands,
                     std::vector<Attribute> attributes, BatchingContext& ctx) {
  auto batched = CloneWithOperands(inst, std::move(operands));
  batched->set_shape(BatchedShape(inst.shape(), ctx.batch_size()));
  batched->clear_sharding();
  for (Attribute& a : attributes) batched->set_attr(std::move(a.name), std::move(a.value));
  return BatchedValue{ctx.emitter().Add(std::move(batched)), BatchTree::Leaf(true)};
}

absl::StatusOr<BatchedValue> BatchBroadcast(const Instruction& inst,
                                            absl::Span<const BatchedValue> operands,
                                            BatchingContext& ctx) {
  return Rebuild(inst, {operands[0].inst},
                 {{"dimensions", PrependZero(inst.attr_ints("dimensions"))}}, ctx);
}

absl::StatusOr<BatchedValue> BatchReshape(const Instruction& inst,
                                          absl::Span<const BatchedValue> operands,
                                          BatchingContext& ctx) {
  return Rebuild(inst, {operands[0].inst}, {}, ctx);
}

// transpose and reverse: a dim list over the operand's dims.
absl::StatusOr<BatchedValue> BatchWithDimensions(const Instruction& inst,
                                                 absl::Span<const BatchedValue> operands,
                                                 BatchingContext& ctx) {
  IntList dims = inst.opcode() == Opcode::kTranspose ? PrependZero(inst.attr_ints("dimensions"))
                                                     : ShiftDims(inst.attr_ints("dimensions"));
  return Rebuild(inst, {operands[0].inst}, {{"dimensions", std::move(dims)}}, ctx);
}

absl::StatusOr<BatchedValue> BatchSlice(const Instruction& inst,
                                        absl::Span<const BatchedValue> operands,
                                        BatchingContext& ctx) {
  IntListList slice = {{0, ctx.batch_size(), 1}};
  for (const std::vector<int64_t>& s : inst.attr_int_lists("slice")) slice.push_back(s);
  return Rebuild(inst, {operands[0].inst}, {{"slice", std::move(slice)}}, ctx);
}

absl::StatusOr<BatchedValue> BatchConcatenate(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched,
                   MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
  return Rebuild(inst, std::move(batched),
                 {{"dimensions", ShiftDims(inst.attr_ints("dimensions"))}}, ctx);
}

// pad with an unbatched padding value pads the batch dim by nothing. A
// batched padding value cannot be an operand of pad (it must be a scalar), so
// the result is assembled with a select between the padded operand and the
// per-slice value, using a padded mask of where the operand lands.
absl::StatusOr<BatchedValue> BatchPad(const Instruction& inst,
                                      absl::Span<const BatchedValue> operands,
                                      BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  const Shape& operand_shape = inst.operand(0)->shape();
  IntListList padding = {{0, 0, 0}};
  for (const std::vector<int64_t>& p : inst.attr_int_lists("padding")) padding.push_back(p);
  ASSIGN_OR_RETURN(Instruction * operand, Materialize(e, operands[0], b));
  if (!operands[1].batched.batched()) {
    return Rebuild(inst, {operand, operands[1].inst}, {{"padding", std::move(padding)}}, ctx);
  }
  const Shape batched_result = BatchedShape(inst.shape(), b);
  const Shape mask_operand_shape(PrimitiveType::kPred, BatchedShape(operand_shape, b).dims());
  Instruction* on = ScalarConstant(e, PrimitiveType::kPred, 1);
  Instruction* off = ScalarConstant(e, PrimitiveType::kPred, 0);
  Instruction* ones = Broadcast(e, on, mask_operand_shape, {});
  Instruction* mask = e.Add(Opcode::kPad, Shape(PrimitiveType::kPred, batched_result.dims()),
                            {ones, off}, {{"padding", padding}});
  Instruction* zero = ScalarConstant(e, operand_shape.type(), 0);
  Instruction* padded =
      e.Add(Opcode::kPad, batched_result, {operand, zero}, {{"padding", padding}});
  Instruction* value = Broadcast(e, operands[1].inst, batched_result, {0});
  Instruction* select = e.Add(Opcode::kSelect, batched_result, {mask, padded, value});
  return BatchedValue{select, BatchTree::Leaf(true)};
}

}  // namespace

void RegisterShapeBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kBroadcast, BatchBroadcast);
  registry.Register(Opcode::kReshape, BatchReshape);
  registry.Register(Opcode::kTranspose, BatchWithDimensions);
  registry.Register(Opcode::kReverse, BatchWithDimensions);
  registry.Register(Opcode::kSlice, BatchSlice);
  registry.Register(Opcode::kConcatenate, BatchConcatenate);
  registry.Register(Opcode::kPad, BatchPad);
}

}  // namespace sharc::hlo
