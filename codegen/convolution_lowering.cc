// Halide lowering of convolution (XLA's ConvWithGeneralPadding) and its
// schedule: a direct convolution, register-tiled like dot's GEMM.
//
// Definition. For every result element (batch b, output feature f, spatial
// positions o_s) the sum over the input features of f's group (c) and the
// window (k_s):
//   out(b, f, o) = sum_{c, k} lhs(b', g*C + c, i) * rhs(c, f, k')
// with i_s = (o_s*stride + k_s*rhs_dilation - pad_lo) / lhs_dilation where
// that position is a whole, in-range input position (padding and the holes
// of lhs dilation read zero), k' the kernel index (reversed if the window
// says so), g = f / (O / feature_group_count) and b' = (f / (O /
// batch_group_count)) * (B / batch_group_count) + b: hlo/ops/convolution_op.cc
// is the reference this must equal. Floats accumulate in the compute type
// (f32 for f16/bf16); integers in int64, saturated to the result's range
// on store, as the reference does.
//
// Schedule. The innermost result dim is vectorised across a register tile
// whose rows are another result dim the innermost's operand does not depend
// on, so that one k step is `vectors` vector loads of one operand and `rows`
// broadcasts of the other for rows x vectors FMAs, as in the GEMM:
//   b01f (NHWC) result: vectors over f (the kernel's o run), rows over the
//                       innermost spatial dim (broadcast input values);
//   bf01 (NCHW) result: vectors over the innermost spatial dim (input
//                       values, strided by the window stride), rows over f
//                       (broadcast kernel values).
// The input feature is the innermost reduction loop, the window's dims
// outside it. The remaining result dims are fused into one parallel loop.
#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "codegen/lowering.h"
#include "codegen/register_tile.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/convolution_dims.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

bool IntegerResult(hlo::PrimitiveType t) { return !hlo::IsFloatingPoint(t); }

absl::Status SupportsConvolution(const hlo::Instruction& inst) {
  const hlo::PrimitiveType t = inst.shape().type();
  if (!inst.shape().is_array() || t == hlo::PrimitiveType::kPred) {
    return LoweringError(inst, "convolution needs a numeric array result");
  }
  for (const hlo::Instruction* operand : inst.operands()) {
    const hlo::PrimitiveType ot = operand->shape().type();
    if (ot == hlo::PrimitiveType::kPred) {
      return LoweringError(inst, "convolution of pred operands has no Halide lowering");
    }
  }
  if (IntegerResult(t) && hlo::ByteWidth(t) > 4) {
    return LoweringError(inst, "a 64-bit integer convolution has no Halide lowering (its sum "
                               "saturates in int64, which a vector loop cannot check cheaply)");
  }
  return hlo::GetConvDims(inst).status();
}

// Where the stages live and what the schedule needs to know.
struct ConvStages {
  Halide::Func accumulator;
  Halide::Func padded_lhs;  // defined where the window reaches padding
  Halide::RDom r;
  hlo::ConvDims dims;
  hlo::PrimitiveType type;
  hlo::PrimitiveType lhs_type;
  std::vector<int64_t> out_dims;
};

// The result dim that takes the tile's rows: the output feature when the
// innermost dim is spatial, else the innermost spatial dim (or the batch
// dim for a convolution without spatial dims).
int64_t RowDim(const hlo::ConvDims& cd, int64_t innermost) {
  if (innermost != cd.out_feature) return cd.out_feature;
  if (!cd.out_spatial.empty()) return cd.out_spatial.back();
  return cd.out_batch;
}

// The padded copy of the lhs: computed once per run, before the
// contraction, its innermost dim vectorised and its outermost parallel.
void SchedulePaddedLhs(Halide::Func padded, hlo::PrimitiveType type) {
  std::vector<Halide::Var> args = padded.args();  // innermost first
  padded.compute_root().vectorize(args.front(), VectorLanes(type));
  if (args.size() > 1) padded.parallel(args.back());
}

void ScheduleConvolution(const ConvStages& s, Halide::Func out) {
  if (s.padded_lhs.defined()) SchedulePaddedLhs(s.padded_lhs, s.lhs_type);
  const int64_t rank = static_cast<int64_t>(s.out_dims.size());
  std::vector<Halide::Var> args = out.args();  // innermost first
  auto var_of = [&](int64_t hlo_dim) { return args[static_cast<size_t>(rank - 1 - hlo_dim)]; };
  const int64_t x_dim = rank - 1;
  const int64_t y_dim = RowDim(s.dims, x_dim);
  const int64_t n = s.out_dims[static_cast<size_t>(x_dim)];
  const int64_t m = s.out_dims[static_cast<size_t>(y_dim)];
  const bool f32 = ComputeType(s.type) == Halide::Float(32);
  const int lanes = NativeLanes(Halide::Float(32));
  const RegisterTile tile = f32 && y_dim != x_dim ? ChooseRegisterTile(m, n, lanes, NativeVectorRegisters())
                                                  : RegisterTile{};
  Halide::Func acc = s.accumulator;
  std::vector<Halide::Var> aargs = acc.args();
  auto acc_var_of = [&](int64_t hlo_dim) { return aargs[static_cast<size_t>(rank - 1 - hlo_dim)]; };
  std::vector<Halide::VarOrRVar> reduction;
  for (int i = 0; i < s.r.dimensions(); ++i) reduction.push_back(s.r[i]);

  // The dims outside the tile (or outside the vectorised row), innermost
  // first, fused into one parallel loop.
  std::vector<Halide::Var> outer;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (d != x_dim && (tile.vectors == 0 || d != y_dim)) outer.push_back(var_of(d));
  }
  auto fuse_outer = [&](Halide::Var inner_loop) {
    Halide::Var task = inner_loop;
    for (const Halide::Var& v : outer) {
      if (v.same_as(inner_loop)) continue;
      Halide::Var fused(absl::StrCat("task_", v.name()));
      out.fuse(task, v, fused);
      task = fused;
    }
    return task;
  };

  if (tile.vectors > 0) {
    Halide::Var x = var_of(x_dim), y = var_of(y_dim), xi("xi"), yi("yi");
    out.tile(x, y, xi, yi, tile.vectors * lanes, tile.rows).vectorize(xi, lanes).unroll(xi).unroll(yi);
    std::vector<Halide::VarOrRVar> order = {xi, yi, y, x};
    for (const Halide::Var& v : outer) order.push_back(v);
    out.reorder(order);
    Halide::Var task = x;
    for (const Halide::Var& v : outer) {
      Halide::Var fused(absl::StrCat("task_", v.name()));
      out.fuse(task, v, fused);
      task = fused;
    }
    out.parallel(task);
    acc.compute_at(out, y).vectorize(acc_var_of(x_dim), lanes).unroll(acc_var_of(x_dim)).unroll(acc_var_of(y_dim));
    std::vector<Halide::VarOrRVar> update_order = {acc_var_of(x_dim), acc_var_of(y_dim)};
    update_order.insert(update_order.end(), reduction.begin(), reduction.end());
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (d != x_dim && d != y_dim) update_order.push_back(acc_var_of(d));
    }
    acc.update().reorder(update_order).vectorize(acc_var_of(x_dim), lanes).unroll(acc_var_of(x_dim)).unroll(acc_var_of(y_dim));
    return;
  }
  // Small or non-f32: vectorise the innermost dim where it is wide enough,
  // one accumulator row per point of the other dims.
  const int vec = f32 ? lanes : 8;
  Halide::Var x = var_of(x_dim);
  if (outer.empty()) {
    acc.compute_at(out, Halide::Var::outermost());
  } else {
    Halide::Var task = fuse_outer(outer.front());
    out.parallel(task);
    acc.compute_at(out, task);
  }
  if (n >= vec) {
    out.vectorize(x, vec);
    acc.vectorize(acc_var_of(x_dim), vec);
    std::vector<Halide::VarOrRVar> update_order = {acc_var_of(x_dim)};
    update_order.insert(update_order.end(), reduction.begin(), reduction.end());
    for (int64_t d = rank - 2; d >= 0; --d) update_order.push_back(acc_var_of(d));
    acc.update().reorder(update_order).vectorize(acc_var_of(x_dim), vec);
  }
}

absl::StatusOr<Lowered> LowerConvolution(const hlo::Instruction& inst,
                                         absl::Span<const LoweredValue> ops) {
  RETURN_IF_ERROR(SupportsConvolution(inst));
  ASSIGN_OR_RETURN(hlo::ConvDims cd, hlo::GetConvDims(inst));
  const hlo::PrimitiveType t = inst.shape().type();
  const hlo::Shape& lhs = ops[0].shape;
  const hlo::Shape& rhs = ops[1].shape;
  const bool integer = IntegerResult(t);
  const Halide::Type acc_type = integer ? Halide::Int(64) : ComputeType(t);
  auto to_acc = [&](const Expr& v, hlo::PrimitiveType type) {
    return Halide::cast(acc_type, ToCompute(v, type));
  };

  const int64_t rank = inst.shape().rank();
  std::vector<Halide::Var> vars = HloVars(rank);
  // The reduction: input feature innermost, then the window's dims from
  // the innermost spatial dim out (RDom dims are innermost first).
  const int64_t in_per_group = rhs.dim(cd.rhs_input_feature);
  std::vector<Halide::Range> ranges = {Halide::Range(0, static_cast<int>(in_per_group))};
  for (size_t s = cd.window.size(); s-- > 0;) {
    ranges.emplace_back(0, static_cast<int>(cd.window[s].size));
  }
  ConvStages stages;
  stages.dims = cd;
  stages.type = t;
  stages.lhs_type = lhs.type();
  stages.out_dims = inst.shape().dims();
  stages.r = Halide::RDom(ranges, HalideName("conv_k", inst));
  const Expr c = stages.r[0];
  auto k_of = [&](size_t s) -> Expr {
    return stages.r[static_cast<int>(cd.window.size() - s)];  // r[1] is the last spatial dim
  };

  const Expr f = vars[static_cast<size_t>(cd.out_feature)];
  const int64_t kernel_out = rhs.dim(cd.rhs_output_feature);
  Expr lhs_feature = c;
  if (cd.feature_group_count > 1) {
    const int per_group = static_cast<int>(kernel_out / cd.feature_group_count);
    lhs_feature = (f / per_group) * static_cast<int>(in_per_group) + c;
  }
  Expr lhs_batch = vars[static_cast<size_t>(cd.out_batch)];
  if (cd.batch_group_count > 1) {
    const int per_group = static_cast<int>(kernel_out / cd.batch_group_count);
    const int batch_per_group = static_cast<int>(lhs.dim(cd.lhs_batch) / cd.batch_group_count);
    lhs_batch = (f / per_group) * batch_per_group + lhs_batch;
  }
  std::vector<Expr> li(static_cast<size_t>(lhs.rank())), ri(static_cast<size_t>(rhs.rank()));
  li[static_cast<size_t>(cd.lhs_batch)] = lhs_batch;
  li[static_cast<size_t>(cd.lhs_feature)] = lhs_feature;
  ri[static_cast<size_t>(cd.rhs_input_feature)] = c;
  ri[static_cast<size_t>(cd.rhs_output_feature)] = f;
  Expr in_range = const_true();
  bool guarded = false, lhs_dilated = false;
  std::vector<Expr> li_unclamped = li;
  for (size_t s = 0; s < cd.window.size(); ++s) {
    const hlo::ConvWindowDim& w = cd.window[s];
    const int64_t extent = lhs.dim(cd.lhs_spatial[s]);
    const Expr k = k_of(s);
    Expr p = vars[static_cast<size_t>(cd.out_spatial[s])] * static_cast<int>(w.stride) +
             k * static_cast<int>(w.rhs_dilation) - static_cast<int>(w.pad_lo);
    Expr i = p;
    // Whether every position the window reaches is a real input element.
    const int64_t out_extent = stages.out_dims[static_cast<size_t>(cd.out_spatial[s])];
    const int64_t first = -w.pad_lo;
    const int64_t last = (out_extent - 1) * w.stride + (w.size - 1) * w.rhs_dilation - w.pad_lo;
    if (w.lhs_dilation > 1) {
      const int dilation = static_cast<int>(w.lhs_dilation);
      in_range = in_range && p >= 0 && p % dilation == 0 && p / dilation < static_cast<int>(extent);
      i = p / dilation;
      guarded = lhs_dilated = true;
    } else if (first < 0 || last >= extent) {
      in_range = in_range && p >= 0 && p < static_cast<int>(extent);
      guarded = true;
    }
    li[static_cast<size_t>(cd.lhs_spatial[s])] = ClampIndex(i, extent);
    li_unclamped[static_cast<size_t>(cd.lhs_spatial[s])] = i;
    ri[static_cast<size_t>(cd.rhs_spatial[s])] =
        w.reversed ? Expr(static_cast<int>(w.size - 1)) - k : k;
  }
  Expr a;
  if (guarded && !lhs_dilated) {
    // The window reaches padding but no dilation holes: read a padded copy
    // of the lhs (zeros outside it), so the contraction's inner loop is
    // loads and FMAs only. The copy is made once per kernel run, over the
    // region the window reads (Halide's bounds inference); a guard per term
    // instead ran the NHWC 3x3 layer of the benchmark 1.4x slower.
    std::vector<Halide::Var> lvars = HloVars(lhs.rank());
    Expr inside = const_true();
    std::vector<Expr> clamped = AsExprs(lvars);
    for (size_t s = 0; s < cd.window.size(); ++s) {
      const size_t d = static_cast<size_t>(cd.lhs_spatial[s]);
      const int extent = static_cast<int>(lhs.dim(cd.lhs_spatial[s]));
      inside = inside && lvars[d] >= 0 && lvars[d] < extent;
      clamped[d] = ClampIndex(lvars[d], extent);
    }
    stages.padded_lhs = Halide::Func(HalideName("conv_padded_lhs", inst));
    Define(stages.padded_lhs, lvars,
           Halide::select(inside, Call(ops[0].func, clamped), make_zero(StorageType(lhs.type()))));
    a = to_acc(Call(stages.padded_lhs, li_unclamped), lhs.type());
  } else {
    a = to_acc(Call(ops[0].func, li), lhs.type());
    if (guarded) a = Halide::select(in_range, a, make_zero(acc_type));
  }
  const Expr b = to_acc(Call(ops[1].func, ri), rhs.type());

  stages.accumulator = Halide::Func(HalideName("conv_acc", inst));
  Define(stages.accumulator, vars, make_zero(acc_type));
  std::vector<Expr> at = AsExprs(vars);
  stages.accumulator(std::vector<Expr>(at.rbegin(), at.rend())) = Call(stages.accumulator, at) + a * b;

  Expr result = Call(stages.accumulator, at);
  if (integer) {
    const Halide::Type st = StorageType(t);
    result = Halide::cast(st, Halide::clamp(result, Halide::cast(acc_type, st.min()),
                                            Halide::cast(acc_type, st.max())));
  } else {
    result = ToStorage(result, t);
  }
  Lowered out;
  out.kind = LoweringKind::kDot;
  out.func = Halide::Func(HalideName("convolution", inst));
  Define(out.func, vars, result);
  out.accumulator = stages.accumulator;
  if (stages.padded_lhs.defined()) out.helpers.push_back(stages.padded_lhs);
  out.schedule = [stages](Halide::Func consumer) { ScheduleConvolution(stages, consumer); };
  return out;
}

}  // namespace

void RegisterConvolutionLowering(LoweringTable& table) {
  table.Add(hlo::Opcode::kConvolution, LowerConvolution, SupportsConvolution);
}

}  // namespace sharc::codegen
