// Transpose of scatter with an add or an overwrite combiner (the two the JVP
// rules treat as linear).
//
// scatter-add: the operand gets the cotangent; each update gets the
// cotangent at its target (a gather), or zero if its window is out of bounds
// and the scatter skipped it.
//
// overwrite: the operand gets the cotangent with the overwritten positions
// zeroed (a scatter of zeros). Where several updates hit one position, the
// one the scatter applies last survives, and only it gets the cotangent
// there; the others, like skipped ones, get zero. Which one survives is left
// to the scatter itself: the transpose scatters each update's id the same
// way (same indices, same op) and gathers the ids back, so an update's
// cotangent is nonzero exactly where its own id came back. That holds for
// whatever order the backend applies updates in, so long as it applies them
// in the same order for values and ids (sharc's interpreter: row-major order
// of the updates, last wins).
#include <algorithm>

#include "autodiff/jvp_rules/scatter_combiner.h"
#include "autodiff/transpose_rule.h"
#include "autodiff/transpose_rules/index_bounds.h"
#include "autodiff/transpose_rules/scatter.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

bool Contains(const IntList& list, int64_t x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// gather(source, indices) reading, for every update element, the operand
// element the scatter writes it to (indices out of bounds are clamped).
Instruction* GatherAtTargets(Emitter& e, const Instruction& scatter, Instruction* source,
                             Instruction* indices) {
  const Shape& operand = scatter.shape();
  const Shape& updates = scatter.operand(2)->shape();
  const IntList& window = scatter.attr_ints("update_window_dims");
  const IntList& inserted = scatter.attr_ints("inserted_window_dims");
  const IntList& batching = scatter.attr_ints("input_batching_dims");
  IntList slice_sizes;
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const bool collapsed = Contains(inserted, d) || Contains(batching, d);
    slice_sizes.push_back(collapsed ? 1 : updates.dim(window.at(next_window++)));
  }
  std::vector<hlo::Attribute> attrs = {
      {"offset_dims", window},
      {"collapsed_slice_dims", inserted},
      {"start_index_map", scatter.attr_ints("scatter_dims_to_operand_dims")},
      {"index_vector_dim", scatter.attr_int("index_vector_dim")},
      {"slice_sizes", slice_sizes}};
  if (scatter.has_attr("input_batching_dims")) {
    attrs.push_back({"operand_batching_dims", batching});
    attrs.push_back(
        {"start_indices_batching_dims", scatter.attr_ints("scatter_indices_batching_dims")});
  }
  return e.Add(Opcode::kGather, Shape(source->shape().type(), updates.dims()), {source, indices},
               std::move(attrs));
}

// The start indices with the largest start that fits each window.
StartIndices ScatterStarts(const Instruction& scatter, Instruction* indices) {
  const Shape& operand = scatter.shape();
  const Shape& updates = scatter.operand(2)->shape();
  const IntList& window = scatter.attr_ints("update_window_dims");
  const IntList& inserted = scatter.attr_ints("inserted_window_dims");
  const IntList& batching = scatter.attr_ints("input_batching_dims");
  std::vector<int64_t> extent(static_cast<size_t>(operand.rank()), 1);
  size_t next_window = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(inserted, d) || Contains(batching, d)) continue;
    extent[static_cast<size_t>(d)] = updates.dim(window.at(next_window++));
  }
  StartIndices starts;
  starts.indices = indices;
  starts.index_vector_dim = scatter.attr_int("index_vector_dim");
  for (int64_t d : scatter.attr_ints("scatter_dims_to_operand_dims")) {
    starts.upper.push_back(operand.dim(d) - extent[static_cast<size_t>(d)]);
  }
  return starts;
}

// pred[updates dims]: whether the scatter applies each update element;
// nullptr when it applies them all.
Instruction* AppliedUpdates(Emitter& e, const Instruction& scatter, Instruction* indices) {
  const Shape& updates = scatter.operand(2)->shape();
  const IntList& window = scatter.attr_ints("update_window_dims");
  IntList scatter_dims;  // the updates' dims that walk the index batch dims, in order
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (!Contains(window, d)) scatter_dims.push_back(d);
  }
  Instruction* in_bounds = ScatterStarts(scatter, indices).InBounds(e);
  if (in_bounds == nullptr) return nullptr;
  return BroadcastInDim(e, in_bounds, Shape(PrimitiveType::kPred, updates.dims()), scatter_dims);
}

// pred[updates dims]: whether each update element survives an overwriting
// scatter (is applied, and not overwritten by a later duplicate).
Instruction* SurvivingUpdates(Emitter& e, const Instruction& scatter, Instruction* indices) {
  const Shape& updates = scatter.operand(2)->shape();
  const Shape ids_shape(PrimitiveType::kS32, updates.dims());
  const int64_t count = updates.num_elements();
  Instruction* ids = Reshape(
      e,
      e.Add(Opcode::kIota, Shape(PrimitiveType::kS32, {count}), {}, {{"iota_dimension", int64_t{0}}}),
      updates.dims());
  std::vector<hlo::Attribute> attrs = hlo::AttributesExcept(scatter, {"to_apply"});
  attrs.push_back({"to_apply", OverwriteCombiner(ModuleOf(e), PrimitiveType::kS32)});
  Instruction* owners =
      e.Add(Opcode::kScatter, Shape(PrimitiveType::kS32, scatter.shape().dims()),
            {Full(e, Shape(PrimitiveType::kS32, scatter.shape().dims()), -1), indices, ids},
            std::move(attrs));
  return Cmp(e, GatherAtTargets(e, scatter, owners, indices), ids, "EQ");
}

absl::StatusOr<std::vector<Cotangent>> ScatterTranspose(const Instruction& inst,
                                                        const Cotangent& ct,
                                                        TransposeContext& ctx) {
  if (inst.operand_count() != 3) {
    return hlo::OpError(inst, "cannot be transposed: autodiff handles scatter of one operand");
  }
  const Computation& combiner = *inst.attr_computation("to_apply");
  const ScatterCombiner kind = ClassifyScatterCombiner(combiner);
  if (kind == ScatterCombiner::kOther) {
    return hlo::OpError(inst, "cannot be transposed: its combiner %", combiner.name(),
                        " neither adds nor overwrites, so the scatter is not linear");
  }
  Emitter& e = ctx.emitter();
  ASSIGN_OR_RETURN(Instruction * indices, ctx.Primal(inst.operand(1)));
  std::vector<Cotangent> out = NoCotangents(inst);
  if (ctx.IsLinear(inst.operand(0))) {
    if (kind == ScatterCombiner::kAdd) {
      out[0] = ct;
    } else {
      Instruction* zeros = Zeros(e, inst.operand(2)->shape());
      out[0] = Cotangent::Of(e.Add(hlo::CloneWithOperands(inst, {ct.value, indices, zeros})));
    }
  }
  if (ctx.IsLinear(inst.operand(2))) {
    Instruction* gathered = GatherAtTargets(e, inst, ct.value, indices);
    Instruction* kept = kind == ScatterCombiner::kAdd ? AppliedUpdates(e, inst, indices)
                                                      : SurvivingUpdates(e, inst, indices);
    if (kept != nullptr) {
      gathered = Select(e, kept, gathered, Zeros(e, gathered->shape()));
    }
    out[2] = Cotangent::Of(gathered);
  }
  return out;
}

}  // namespace

void RegisterScatterTransposeRule(TransposeRuleRegistry& r) {
  r.Register(Opcode::kScatter, ScatterTranspose);
}

}  // namespace sharc::autodiff
