// dynamic-slice and dynamic-update-slice. With unbatched start indices the
// batch dim is one more dim sliced whole (start 0). With batched indices every
// slice reads or writes at its own place: dynamic-slice becomes a gather and
// dynamic-update-slice a scatter, both using the batch dim as a gather/scatter
// batching dim and the start indices clamped the way dynamic-slice clamps.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {
namespace {

bool AnyBatched(absl::Span<const BatchedValue> values) {
  for (const BatchedValue& v : values)
    if (v.batched.Any()) return true;
  return false;
}

// The start operands for a batched operand and unbatched indices: the new
// leading dim starts at 0.
std::vector<Instruction*> StartsWithZero(Emitter& e, absl::Span<const BatchedValue> indices) {
  std::vector<Instruction*> out;
  PrimitiveType type = indices.empty() ? PrimitiveType::kS32 : indices[0].inst->shape().type();
  out.push_back(ScalarConstant(e, type, 0));
  for (const BatchedValue& v : indices) out.push_back(v.inst);
  return out;
}

// An s64[B, rank] matrix of per-slice start indices, each clamped into
// [0, dims[i] - window[i]] as dynamic-slice does (then gather and scatter see
// only in-range starts and agree with it exactly).
Instruction* StartIndexMatrix(Emitter& e, absl::Span<const BatchedValue> indices,
                              absl::Span<const int64_t> dims, absl::Span<const int64_t> window,
                              int64_t b) {
  const PrimitiveType s64 = PrimitiveType::kS64;
  std::vector<Instruction*> columns;
  for (size_t i = 0; i < indices.size(); ++i) {
    Instruction* index = indices[i].inst;
    const PrimitiveType type = index->shape().type();
    const int64_t high = dims[i] - window[i];
    // A u64 start beyond the s64 range must saturate, not wrap negative: clamp
    // it in its own type first.
    if (type == PrimitiveType::kU64) {
      index = e.Add(Opcode::kClamp, index->shape(),
                    {ScalarConstant(e, type, 0), index, ScalarConstant(e, type, high)});
    }
    if (type != s64) {
      index = e.Add(Opcode::kConvert, Shape(s64, index->shape().dims()), {index});
    }
    index = e.Add(Opcode::kClamp, index->shape(),
                  {ScalarConstant(e, s64, 0), index, ScalarConstant(e, s64, high)});
    if (!indices[i].batched.batched()) index = BroadcastToBatch(e, index, b);
    columns.push_back(e.Add(Opcode::kReshape, Shape(s64, {b, 1}), {index}));
  }
  return e.Add(Opcode::kConcatenate, Shape(s64, {b, static_cast<int64_t>(indices.size())}), columns,
               {{"dimensions", IntList{1}}});
}

absl::StatusOr<BatchedValue> BatchDynamicSlice(const Instruction& inst,
                                               absl::Span<const BatchedValue> operands,
                                               BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  absl::Span<const BatchedValue> indices = operands.subspan(1);
  const IntList& sizes = inst.attr_ints("dynamic_slice_sizes");
  const Shape batched_result = BatchedShape(inst.shape(), b);
  if (!AnyBatched(indices)) {
    std::vector<Instruction*> new_operands = {operands[0].inst};
    for (Instruction* s : StartsWithZero(e, indices)) new_operands.push_back(s);
    auto slice = CloneWithOperands(inst, std::move(new_operands));
    slice->set_shape(batched_result);
    slice->clear_sharding();
    IntList new_sizes = {b};
    new_sizes.insert(new_sizes.end(), sizes.begin(), sizes.end());
    slice->set_attr("dynamic_slice_sizes", std::move(new_sizes));
    return BatchedValue{e.Add(std::move(slice)), BatchTree::Leaf(true)};
  }
  if (b == 0) return BatchedValue{EmptyBatch(e, inst.shape()), BatchTree::Leaf(true)};
  const Shape& operand_shape = inst.operand(0)->shape();
  const int64_t rank = operand_shape.rank();
  Instruction* starts = StartIndexMatrix(e, indices, operand_shape.dims(), sizes, b);
  const bool operand_batched = operands[0].batched.batched();
  IntList slice_sizes = sizes;
  std::vector<Attribute> attributes = {{"offset_dims", DimRange(1, rank)},
                                       {"collapsed_slice_dims", IntList{}}};
  if (operand_batched) {
    slice_sizes.insert(slice_sizes.begin(), 1);
    attributes.push_back({"start_index_map", DimRange(1, rank)});
    attributes.push_back({"operand_batching_dims", IntList{0}});
    attributes.push_back({"start_indices_batching_dims", IntList{0}});
  } else {
    attributes.push_back({"start_index_map", DimRange(0, rank)});
  }
  attributes.push_back({"index_vector_dim", int64_t{1}});
  attributes.push_back({"slice_sizes", std::move(slice_sizes)});
  Instruction* gather =
      e.Add(Opcode::kGather, batched_result, {operands[0].inst, starts}, std::move(attributes));
  return BatchedValue{gather, BatchTree::Leaf(true)};
}

// A scatter combiner that keeps the update: (current, update) -> update.
Computation* OverwriteComputation(BatchingContext& ctx, PrimitiveType type) {
  auto computation = std::make_unique<Computation>("overwrite");
  Shape scalar = Shape::Scalar(type);
  computation->AddInstruction(Instruction::CreateParameter(0, "current", scalar));
  Instruction* update =
      computation->AddInstruction(Instruction::CreateParameter(1, "update", scalar));
  computation->set_root(update);
  return ctx.AddComputation(std::move(computation));
}

absl::StatusOr<BatchedValue> BatchDynamicUpdateSlice(const Instruction& inst,
                                                     absl::Span<const BatchedValue> operands,
                                                     BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t b = ctx.batch_size();
  ASSIGN_OR_RETURN(Instruction * operand, Materialize(e, operands[0], b));
  ASSIGN_OR_RETURN(Instruction * update, Materialize(e, operands[1], b));
  absl::Span<const BatchedValue> indices = operands.subspan(2);
  const Shape batched_result = BatchedShape(inst.shape(), b);
  if (!AnyBatched(indices)) {
    std::vector<Instruction*> new_operands = {operand, update};
    for (Instruction* s : StartsWithZero(e, indices)) new_operands.push_back(s);
    auto dus = CloneWithOperands(inst, std::move(new_operands));
    dus->set_shape(batched_result);
    dus->clear_sharding();
    return BatchedValue{e.Add(std::move(dus)), BatchTree::Leaf(true)};
  }
  if (b == 0) return BatchedValue{EmptyBatch(e, inst.shape()), BatchTree::Leaf(true)};
  const Shape& operand_shape = inst.operand(0)->shape();
  const Shape& update_shape = inst.operand(1)->shape();
  const int64_t rank = operand_shape.rank();
  Instruction* starts = StartIndexMatrix(e, indices, operand_shape.dims(), update_shape.dims(), b);
  Computation* overwrite = OverwriteComputation(ctx, operand_shape.type());
  // Each slice writes only its own batch entry, so no two updates collide.
  Instruction* scatter = e.Add(Opcode::kScatter, batched_result, {operand, starts, update},
                               {{"update_window_dims", DimRange(1, rank)},
                                {"inserted_window_dims", IntList{}},
                                {"scatter_dims_to_operand_dims", DimRange(1, rank)},
                                {"input_batching_dims", IntList{0}},
                                {"scatter_indices_batching_dims", IntList{0}},
                                {"index_vector_dim", int64_t{1}},
                                {"unique_indices", true},
                                {"to_apply", overwrite}});
  return BatchedValue{scatter, BatchTree::Leaf(true)};
}

}  // namespace

void RegisterDynamicSliceBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kDynamicSlice, BatchDynamicSlice);
  registry.Register(Opcode::kDynamicUpdateSlice, BatchDynamicUpdateSlice);
}

}  // namespace sharc::hlo
