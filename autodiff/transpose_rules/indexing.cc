// Transpose rules of the indexed ops: dynamic-slice <-> dynamic-update-slice
// and gather -> scatter-add (scatter's own rule is in scatter.cc). Indices
// are never linear.
#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "autodiff/transpose_rules/index_bounds.h"
#include "autodiff/transpose_rules/scatter.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ops/op_util.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::autodiff {
namespace {

absl::StatusOr<std::vector<Instruction*>> Indices(const Instruction& inst, int64_t from,
                                                  TransposeContext& ctx) {
  std::vector<Instruction*> out;
  for (int64_t i = from; i < inst.operand_count(); ++i) {
    ASSIGN_OR_RETURN(Instruction * v, ctx.Primal(inst.operand(i)));
    out.push_back(v);
  }
  return out;
}

}  // namespace

void RegisterIndexingTransposeRules(TransposeRuleRegistry& r) {
  // dynamic-slice -> place the cotangent into zeros at the same (clamped)
  // position: dynamic-update-slice clamps its start the same way.
  r.Register(Opcode::kDynamicSlice, [](const Instruction& inst, const Cotangent& ct,
                                       TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    ASSIGN_OR_RETURN(std::vector<Instruction*> indices, Indices(inst, 1, ctx));
    const Shape& operand = inst.operand(0)->shape();
    std::vector<Instruction*> operands = {Zeros(e, operand), ct.value};
    operands.insert(operands.end(), indices.begin(), indices.end());
    std::vector<Cotangent> out = NoCotangents(inst);
    out[0] = Cotangent::Of(e.Add(Opcode::kDynamicUpdateSlice, operand, std::move(operands)));
    return out;
  });
  // dynamic-update-slice -> the operand gets the cotangent with the window
  // zeroed; the update gets the window.
  r.Register(Opcode::kDynamicUpdateSlice, [](const Instruction& inst, const Cotangent& ct,
                                             TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    ASSIGN_OR_RETURN(std::vector<Instruction*> indices, Indices(inst, 2, ctx));
    const Shape& update = inst.operand(1)->shape();
    std::vector<Cotangent> out = NoCotangents(inst);
    if (ctx.IsLinear(inst.operand(0))) {
      std::vector<Instruction*> operands = {ct.value, Zeros(e, update)};
      operands.insert(operands.end(), indices.begin(), indices.end());
      out[0] = Cotangent::Of(e.Add(Opcode::kDynamicUpdateSlice, inst.shape(), std::move(operands)));
    }
    if (ctx.IsLinear(inst.operand(1))) {
      std::vector<Instruction*> operands = {ct.value};
      operands.insert(operands.end(), indices.begin(), indices.end());
      out[1] = Cotangent::Of(e.Add(Opcode::kDynamicSlice, update, std::move(operands),
                                   {{"dynamic_slice_sizes", update.dims()}}));
    }
    return out;
  });
  // gather -> scatter-add of the cotangent into zeros, at the start indices
  // gather read from: it clamps them into the operand where scatter would
  // skip them.
  r.Register(Opcode::kGather, [](const Instruction& inst, const Cotangent& ct,
                                 TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    const Shape& operand = inst.operand(0)->shape();
    StartIndices starts;
    ASSIGN_OR_RETURN(starts.indices, ctx.Primal(inst.operand(1)));
    starts.index_vector_dim = inst.attr_int("index_vector_dim");
    for (int64_t d : inst.attr_ints("start_index_map")) {
      starts.upper.push_back(operand.dim(d) - inst.attr_ints("slice_sizes")[static_cast<size_t>(d)]);
    }
    Instruction* indices = starts.Clamped(e);
    std::vector<hlo::Attribute> attrs = {
        {"update_window_dims", inst.attr_ints("offset_dims")},
        {"inserted_window_dims", inst.attr_ints("collapsed_slice_dims")},
        {"scatter_dims_to_operand_dims", inst.attr_ints("start_index_map")},
        {"index_vector_dim", inst.attr_int("index_vector_dim")},
        {"to_apply", hlo::BinaryReducer(ModuleOf(e), Opcode::kAdd, operand.type())}};
    if (inst.has_attr("operand_batching_dims")) {
      attrs.push_back({"input_batching_dims", inst.attr_ints("operand_batching_dims")});
      attrs.push_back(
          {"scatter_indices_batching_dims", inst.attr_ints("start_indices_batching_dims")});
    }
    std::vector<Cotangent> out = NoCotangents(inst);
    out[0] = Cotangent::Of(e.Add(Opcode::kScatter, operand,
                                 {Zeros(e, operand), indices, ct.value}, std::move(attrs)));
    return out;
  });
  RegisterScatterTransposeRule(r);
}

}  // namespace sharc::autodiff
