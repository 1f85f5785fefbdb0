// Transpose rules of dot and sums. A dot linear in one operand transposes to
// a dot of the cotangent with the other operand (then a transpose into the
// operand's dimension order); a sum transposes to a broadcast.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "autodiff/builder.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::autodiff {
namespace {

bool Contains(const IntList& list, int64_t x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// Dims of a rank-`rank` operand that are neither batch nor contracting.
IntList FreeDims(int64_t rank, const IntList& batch, const IntList& contracting) {
  IntList free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  }
  return free;
}

// The cotangent of dot operand `x` (the other is `y`): dot(ct, y) contracting
// ct's y-free dims with y's free dims, batched like the original. Its result
// is [batch, x-free (in order), y-contracting (sorted by y dim)]; the
// transpose puts x's dims back in place.
Instruction* DotOperandCotangent(Emitter& e, Instruction* ct, Instruction* y, const Shape& x_shape,
                                 const IntList& x_batch, const IntList& x_contract,
                                 const IntList& y_batch, const IntList& y_contract,
                                 bool x_is_lhs) {
  const int64_t nb = static_cast<int64_t>(x_batch.size());
  const IntList x_free = FreeDims(x_shape.rank(), x_batch, x_contract);
  const IntList y_free = FreeDims(y->shape().rank(), y_batch, y_contract);
  const int64_t nxf = static_cast<int64_t>(x_free.size());
  // ct dims: [batch, lhs free, rhs free].
  IntList ct_batch(static_cast<size_t>(nb));
  std::iota(ct_batch.begin(), ct_batch.end(), 0);
  IntList ct_contract;
  const int64_t y_free_start = x_is_lhs ? nb + nxf : nb;
  for (size_t j = 0; j < y_free.size(); ++j) ct_contract.push_back(y_free_start + static_cast<int64_t>(j));
  // Result of dot(ct, y): [batch, ct free, y free-in-this-dot].
  IntList ct_free = FreeDims(ct->shape().rank(), ct_batch, ct_contract);
  IntList y_rest = FreeDims(y->shape().rank(), y_batch, y_free);  // = y_contract, sorted
  std::vector<int64_t> dims;
  for (int64_t d : ct_batch) dims.push_back(ct->shape().dim(d));
  for (int64_t d : ct_free) dims.push_back(ct->shape().dim(d));
  for (int64_t d : y_rest) dims.push_back(y->shape().dim(d));
  std::vector<hlo::Attribute> attrs;
  for (auto& [name, dims_list] : {std::pair{"lhs_batch_dims", ct_batch},
                                  std::pair{"lhs_contracting_dims", ct_contract},
                                  std::pair{"rhs_batch_dims", y_batch},
                                  std::pair{"rhs_contracting_dims", y_free}}) {
    if (!dims_list.empty()) attrs.push_back({name, dims_list});
  }
  Instruction* product =
      e.Add(Opcode::kDot, Shape(x_shape.type(), dims), {ct, y}, std::move(attrs));
  // Position in `product` of each x dim.
  IntList perm(static_cast<size_t>(x_shape.rank()));
  for (int64_t i = 0; i < nb; ++i) perm[static_cast<size_t>(x_batch[static_cast<size_t>(i)])] = i;
  for (int64_t j = 0; j < nxf; ++j) {
    // ct's x-free dims are in x order, and are the ct_free dims in order.
    perm[static_cast<size_t>(x_free[static_cast<size_t>(j)])] = nb + j;
  }
  for (size_t k = 0; k < x_contract.size(); ++k) {
    const int64_t yd = y_contract[k];
    const int64_t rank = std::find(y_rest.begin(), y_rest.end(), yd) - y_rest.begin();
    perm[static_cast<size_t>(x_contract[k])] = nb + nxf + rank;
  }
  return Transpose(e, product, perm);
}

// A windowed sum: element j of the padded, base-dilated operand receives
// ct[o] for every window o and position k with o*stride + k*wd = j (wd the
// window dilation). Spread ct out by the stride and pad it by the window's
// span - 1 on each side; then that sum is a windowed sum over the spread
// cotangent with the same window size and dilation and stride 1 (the window
// flipped, which a sum does not notice). The operand's elements sit at
// positions pad_lo + i * base_dilation of the result, read with a strided
// slice (positions before 0 or past the end are not covered by any window:
// zero).
absl::StatusOr<std::vector<Cotangent>> ReduceWindowTranspose(const Instruction& inst,
                                                             const Cotangent& ct,
                                                             TransposeContext& ctx) {
  std::optional<Opcode> op = hlo::MatchBinaryReducer(*inst.attr_computation("to_apply"));
  if (inst.operand_count() != 2 || op != Opcode::kAdd) {
    return hlo::OpError(inst, "can be transposed only as a single-operand windowed sum (the "
                              "JVP rules make no other reduce-window linear)");
  }
  Emitter& e = ctx.emitter();
  const Shape& operand = inst.operand(0)->shape();
  const hlo::IntListList& window = inst.attr_int_lists("window");
  hlo::IntListList spread_padding;
  hlo::IntListList unit_window;
  std::vector<int64_t> spread_dims;
  std::vector<int64_t> summed_dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];  // size stride lo hi lhs rhs
    const int64_t span = (w[0] - 1) * w[5] + 1;
    const int64_t n = inst.shape().dim(d);
    spread_padding.push_back({span - 1, span - 1, w[1] - 1});
    spread_dims.push_back(n == 0 ? 2 * (span - 1) : (n - 1) * w[1] + 1 + 2 * (span - 1));
    summed_dims.push_back(spread_dims.back() - span + 1);
    unit_window.push_back({w[0], 1, 0, 0, 1, w[5]});
  }
  Instruction* zero = ScalarOf(e, operand.type(), 0.0);
  Instruction* spread = e.Add(Opcode::kPad, Shape(operand.type(), spread_dims), {ct.value, zero},
                              {{"padding", spread_padding}});
  Instruction* summed = e.Add(Opcode::kReduceWindow, Shape(operand.type(), summed_dims),
                              {spread, zero},
                              {{"window", unit_window},
                               {"to_apply", hlo::BinaryReducer(ModuleOf(e), Opcode::kAdd, operand.type())}});
  // `summed` covers positions [0, summed size) of the padded operand; pad
  // it (with zeros, non-negatively) until it covers every operand element,
  // then read those.
  hlo::IntListList extend;
  std::vector<int64_t> extended_dims;
  hlo::IntListList spec;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    const int64_t n = operand.dim(d);
    const int64_t size = summed_dims[static_cast<size_t>(d)];
    const int64_t front = std::max<int64_t>(0, -w[2]);
    const int64_t first = w[2] + front;  // element 0's position in the extended array
    const int64_t end = n == 0 ? first : first + (n - 1) * w[4] + 1;
    const int64_t back = std::max<int64_t>(0, end - (front + size));
    extend.push_back({front, back, 0});
    extended_dims.push_back(front + size + back);
    spec.push_back({first, end, w[4]});
  }
  Instruction* full = summed;
  if (extended_dims != summed_dims) {
    full = e.Add(Opcode::kPad, Shape(operand.type(), extended_dims), {summed, zero},
                 {{"padding", extend}});
  }
  std::vector<Cotangent> out = NoCotangents(inst);
  if (ctx.IsLinear(inst.operand(0))) {
    out[0] = Cotangent::Of(e.Add(Opcode::kSlice, operand, {full}, {{"slice", std::move(spec)}}));
  }
  if (ctx.IsLinear(inst.operand(1))) {
    // The init value is added once per output element.
    IntList all(static_cast<size_t>(inst.shape().rank()));
    std::iota(all.begin(), all.end(), 0);
    out[1] = Cotangent::Of(ReduceSum(e, ct.value, all));
  }
  return out;
}

// ragged-dot in jax.lax.ragged_dot's form: x [m,k] cut into groups of
// rows by sizes [g], w [g,k,n], y [m,n] = each row times its group's w.
//   x's cotangent: ct [m,n] times w^T, row by row per group:
//                  ragged-dot(ct, w^T [g,n,k])
//   w's cotangent: group j's rows of x^T ct, [g,k,n]: ragged-dot(x^T, ct)
//                  with the ragged dim contracted (XLA's contracting mode)
// Other forms (batch dims, other dim orders) have no transpose yet.
absl::StatusOr<std::vector<Cotangent>> RaggedDotTranspose(const Instruction& inst,
                                                         const Cotangent& ct,
                                                         TransposeContext& ctx) {
  const hlo::Shape& x = inst.operand(0)->shape();
  const hlo::Shape& w = inst.operand(1)->shape();
  const bool plain = x.rank() == 2 && w.rank() == 3 &&
                     inst.attr_ints("lhs_batch_dims").empty() &&
                     inst.attr_ints("lhs_contracting_dims") == IntList{1} &&
                     inst.attr_ints("rhs_contracting_dims") == IntList{1} &&
                     inst.attr_ints("lhs_ragged_dims") == IntList{0} &&
                     inst.attr_ints("rhs_group_dims") == IntList{0};
  if (!plain) {
    return absl::UnimplementedError(absl::StrCat(
        "ragged-dot is transposed only in jax.lax.ragged_dot's form (lhs [m,k] ragged along m, "
        "rhs [g,k,n]), in ", inst.Describe()));
  }
  if (ctx.IsLinear(inst.operand(0)) && ctx.IsLinear(inst.operand(1))) {
    return hlo::OpError(inst, "cannot be transposed: both operands depend on the linear inputs");
  }
  Emitter& e = ctx.emitter();
  ASSIGN_OR_RETURN(Instruction * sizes, ctx.Primal(inst.operand(2)));
  std::vector<Cotangent> out = NoCotangents(inst);
  if (ctx.IsLinear(inst.operand(0))) {
    ASSIGN_OR_RETURN(Instruction * weights, ctx.Primal(inst.operand(1)));
    Instruction* transposed = Transpose(e, weights, {0, 2, 1});
    out[0] = Cotangent::Of(e.Add(Opcode::kRaggedDot, x, {ct.value, transposed, sizes},
                                 {{"lhs_contracting_dims", IntList{1}},
                                  {"rhs_contracting_dims", IntList{1}},
                                  {"lhs_ragged_dims", IntList{0}},
                                  {"rhs_group_dims", IntList{0}}}));
  } else {
    ASSIGN_OR_RETURN(Instruction * rows, ctx.Primal(inst.operand(0)));
    Instruction* transposed = Transpose(e, rows, {1, 0});
    out[1] = Cotangent::Of(e.Add(Opcode::kRaggedDot, w, {transposed, ct.value, sizes},
                                 {{"lhs_contracting_dims", IntList{1}},
                                  {"rhs_contracting_dims", IntList{0}},
                                  {"lhs_ragged_dims", IntList{1}}}));
  }
  return out;
}

}  // namespace

void RegisterReductionTransposeRules(TransposeRuleRegistry& r) {
  r.Register(Opcode::kRaggedDot, RaggedDotTranspose);
  r.Register(Opcode::kDot, [](const Instruction& inst, const Cotangent& ct,
                              TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    const bool l0 = ctx.IsLinear(inst.operand(0));
    const bool l1 = ctx.IsLinear(inst.operand(1));
    if (l0 && l1) {
      return hlo::OpError(inst, "cannot be transposed: both operands depend on the linear inputs");
    }
    const IntList lb = inst.attr_ints("lhs_batch_dims");
    const IntList lc = inst.attr_ints("lhs_contracting_dims");
    const IntList rb = inst.attr_ints("rhs_batch_dims");
    const IntList rc = inst.attr_ints("rhs_contracting_dims");
    std::vector<Cotangent> out = NoCotangents(inst);
    Emitter& e = ctx.emitter();
    if (l0) {
      ASSIGN_OR_RETURN(Instruction * rhs, ctx.Primal(inst.operand(1)));
      out[0] = Cotangent::Of(DotOperandCotangent(e, ct.value, rhs, inst.operand(0)->shape(), lb,
                                                 lc, rb, rc, /*x_is_lhs=*/true));
    } else {
      ASSIGN_OR_RETURN(Instruction * lhs, ctx.Primal(inst.operand(0)));
      out[1] = Cotangent::Of(DotOperandCotangent(e, ct.value, lhs, inst.operand(1)->shape(), rb,
                                                 rc, lb, lc, /*x_is_lhs=*/false));
    }
    return out;
  });
  // A sum (reduce with an add reducer, the only reduce the JVP rules make
  // linear) -> broadcast back; the init value gets the total.
  r.Register(Opcode::kReduce, [](const Instruction& inst, const Cotangent& ct,
                                 TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    std::optional<Opcode> op = hlo::MatchBinaryReducer(*inst.attr_computation("to_apply"));
    if (inst.operand_count() != 2 || op != Opcode::kAdd) {
      return hlo::OpError(inst, "can be transposed only as a single-operand sum (the JVP rules "
                                "make no other reduce linear)");
    }
    Emitter& e = ctx.emitter();
    const Shape& operand = inst.operand(0)->shape();
    const IntList& dims = inst.attr_ints("dimensions");
    IntList kept;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (!Contains(dims, d)) kept.push_back(d);
    }
    std::vector<Cotangent> out = NoCotangents(inst);
    if (ctx.IsLinear(inst.operand(0))) {
      out[0] = Cotangent::Of(BroadcastInDim(e, ct.value, operand, kept));
    }
    if (ctx.IsLinear(inst.operand(1))) {
      IntList all(static_cast<size_t>(inst.shape().rank()));
      std::iota(all.begin(), all.end(), 0);
      out[1] = Cotangent::Of(ReduceSum(e, ct.value, all));
    }
    return out;
  });
  r.Register(Opcode::kReduceWindow, ReduceWindowTranspose);
}

}  // namespace sharc::autodiff
