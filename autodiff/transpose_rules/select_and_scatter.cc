// Transpose of select-and-scatter in its source (and init value), for a
// fixed operand and an add scatter: each source element was added at the
// operand element its window selected, so its cotangent is the cotangent
// read back there (JAX's _select_and_scatter_add_transpose, a
// select_and_gather_add); the init value was added everywhere, so its
// cotangent is the sum of the cotangent.
//
//   %y = select-and-scatter(%x, %s, %zero), window={size=2 stride=2}, select=GE
//   ->  ct_s[w] = ct[selected(w)]: scan the K positions of each window in
//       order, as the evaluator does, keeping the first element unless
//       select(kept, candidate) is false; then take ct at the kept offset
//
// The selection is made with the op's own select function, lifted to arrays,
// so GE, LE, GT or any scalar predicate picks what the op picked (ties and
// all). Padding holds no element: it is never selected.
#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/reduction_rules.h"
#include "autodiff/jvp_rules/window_geometry.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/scalar_function.h"

namespace sharc::autodiff {
namespace {

// pred[dims]: select(a, b) elementwise.
absl::StatusOr<Instruction*> ApplySelect(Emitter& e, const Instruction& inst, Instruction* a,
                                         Instruction* b) {
  const Computation& select = *inst.attr_computation("select");
  if (!hlo::IsScalarFunction(*select.root())) {
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: transposing a select-and-scatter whose select function is not a function "
        "of scalars (parameters, constants and elementwise ops), in ",
        inst.Describe()));
  }
  return hlo::LiftScalarFunction(
      *select.root(), a->shape().dims(), [&](int64_t k) { return k == 0 ? a : b; },
      [&](std::unique_ptr<Instruction> made) { return e.Add(std::move(made)); }, "select",
      "select");
}

// s32[source dims]: the offset within each window of the operand element
// the window selects, -1 where the window holds only padding.
absl::StatusOr<Instruction*> SelectedOffsets(Emitter& e, const Instruction& inst,
                                             const WindowGeometry& window, Instruction* operand) {
  const std::vector<int64_t> dims = window.output_dims();
  const Shape offsets_shape(PrimitiveType::kS32, dims);
  const PrimitiveType type = operand->shape().type();
  Instruction* padded = window.Pad(e, operand, ScalarOf(e, type, 0.0));
  Instruction* kept = Zeros(e, Shape(type, dims));
  Instruction* offsets = Full(e, offsets_shape, -1);
  for (int64_t k = 0; k < window.num_offsets(); ++k) {
    const std::vector<int64_t> offset = window.Offset(k);
    Instruction* candidate = window.Element(e, padded, offset);
    ASSIGN_OR_RETURN(Instruction * keep, ApplySelect(e, inst, kept, candidate));
    Instruction* none_yet = Cmp(e, offsets, Full(e, offsets_shape, -1), "EQ");
    Instruction* take = Binary(e, Opcode::kOr, none_yet, Unary(e, Opcode::kNot, keep));
    if (Instruction* valid = window.Valid(e, offset)) take = Binary(e, Opcode::kAnd, take, valid);
    kept = Select(e, take, candidate, kept);
    offsets = Select(e, take, Full(e, offsets_shape, static_cast<double>(k)), offsets);
  }
  return offsets;
}

absl::StatusOr<std::vector<Cotangent>> SelectAndScatterTranspose(const Instruction& inst,
                                                                 const Cotangent& ct,
                                                                 TransposeContext& ctx) {
  if (ctx.IsLinear(inst.operand(0))) {
    return hlo::OpError(inst, "cannot be transposed: the selection depends on the linear "
                              "inputs (it is linear in its source and init value only)");
  }
  if (!ScattersByAdding(inst)) {
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: transposing a select-and-scatter whose scatter function is not an add, in ",
        inst.Describe()));
  }
  Emitter& e = ctx.emitter();
  Instruction* ct_value = ctx.Materialize(ct, inst.shape());
  std::vector<Cotangent> out = NoCotangents(inst);
  if (ctx.IsLinear(inst.operand(1))) {
    const WindowGeometry window = WindowGeometry::Of(inst);
    ASSIGN_OR_RETURN(Instruction * operand, ctx.Primal(inst.operand(0)));
    ASSIGN_OR_RETURN(Instruction * offsets, SelectedOffsets(e, inst, window, operand));
    Instruction* padded = window.Pad(e, ct_value, ScalarOf(e, inst.shape().type(), 0.0));
    out[1] = Cotangent::Of(window.AtOffsets(e, padded, offsets));
  }
  if (ctx.IsLinear(inst.operand(2))) {
    hlo::IntList all;
    for (int64_t d = 0; d < inst.shape().rank(); ++d) all.push_back(d);
    out[2] = Cotangent::Of(ReduceSum(e, ct_value, std::move(all)));
  }
  return out;
}

}  // namespace

void RegisterSelectAndScatterTransposeRule(TransposeRuleRegistry& r) {
  r.Register(Opcode::kSelectAndScatter, SelectAndScatterTranspose);
}

}  // namespace sharc::autodiff
