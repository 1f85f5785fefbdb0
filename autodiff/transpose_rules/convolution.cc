// The transpose rule of convolution: linear in each operand, and each
// transpose is another convolution (the rules of JAX's lax.conv_general_
// dilated VJP, written for HLO's dim_labels and windows).
//
// With the input x linear, the cotangent of x is the cotangent ct of the
// result convolved with the kernel turned around: kernel features swapped
// (i <-> o), the window reversed, the original stride becoming ct's
// dilation and the original input dilation the stride:
//   y    = f32[2,4,5] convolution(f32[2,8,3] x, f32[3,3,5] k),
//          window={size=3 stride=2 pad=1_1}, dim_labels=b0f_0io->b0f
//   ct_x = f32[2,8,3] convolution(ct, k),
//          window={size=3 pad=1_2 lhs_dilate=2 rhs_reversal=1}, dim_labels=b0f_0oi->b0f
// With the kernel k linear, the cotangent of k is x convolved with ct, x's
// batch and feature dims swapped (the batch is what the sum runs over) and
// ct read as the kernel, the original stride becoming the window dilation:
//   ct_k = f32[3,3,5] convolution(x, ct),
//          window={size=4 pad=1_0 rhs_dilate=2}, dim_labels=f0b_i0o->0bf
// Paddings follow from the shapes. Groups: for the input's cotangent the
// kernel's G groups move from its output features into its input features
// (RegroupKernel) and the convolution keeps G feature groups (batch groups
// become feature groups, and the result's G feature blocks move back into
// the batch); for the kernel's cotangent feature groups become batch groups
// and back. A reversed window is refused with a reason (not written yet).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/convolution_dims.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

// The labels of one tensor: `first` and `second` at their dims, the
// spatial dims numbered in window order.
std::string Labels(int64_t rank, int64_t first_dim, char first, int64_t second_dim, char second,
                   const std::vector<int64_t>& spatial) {
  std::string labels(static_cast<size_t>(rank), '?');
  labels[static_cast<size_t>(first_dim)] = first;
  labels[static_cast<size_t>(second_dim)] = second;
  for (size_t s = 0; s < spatial.size(); ++s) {
    labels[static_cast<size_t>(spatial[s])] = static_cast<char>('0' + s);
  }
  return labels;
}

// Size of `n` elements spread `dilation` apart (0 stays 0).
int64_t Dilated(int64_t n, int64_t dilation) { return n == 0 ? 0 : 1 + dilation * (n - 1); }

// One spatial dim's extents as the window sees them: the input spread by
// its dilation, the window by its, the output by the stride.
struct DilatedExtents {
  int64_t x = 0, k = 0, y = 0;
};

DilatedExtents Extents(const hlo::ConvDims& cd, size_t s, const Shape& x, const Shape& y) {
  const hlo::ConvWindowDim& w = cd.window[s];
  return {Dilated(x.dim(cd.lhs_spatial[s]), w.lhs_dilation), Dilated(w.size, w.rhs_dilation),
          Dilated(y.dim(cd.out_spatial[s]), w.stride)};
}

// `x` with dim `from` split into (groups, rest), group-major, and the group
// axis merged into dim `into` as its major part, giving `dims` (JAX's
// _reshape_axis_out_of, then _reshape_axis_into). For the kernel's groups:
// [.., O, .., I, ..] -> [.., O/G, .., G*I, ..]; for a batch-grouped
// cotangent: features [G*C] and batch [N/G] -> [C] and [N].
Instruction* MoveGroupAxis(Emitter& e, Instruction* x, int64_t from, int64_t into, int64_t groups,
                           std::vector<int64_t> dims) {
  const std::vector<int64_t>& in = x->shape().dims();
  std::vector<int64_t> split;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    if (d == from) split.push_back(groups);
    split.push_back(d == from ? in[static_cast<size_t>(d)] / groups : in[static_cast<size_t>(d)]);
  }
  // Axes of the split array: the group axis is `from`; `into` is one
  // further on if it came after `from`.
  const int64_t into_axis = into > from ? into + 1 : into;
  IntList perm;
  for (int64_t a = 0; a < static_cast<int64_t>(split.size()); ++a) {
    if (a == from) continue;
    if (a == into_axis) perm.push_back(from);
    perm.push_back(a);
  }
  return Reshape(e, Transpose(e, Reshape(e, x, split), perm), std::move(dims));
}

absl::StatusOr<std::vector<Cotangent>> ConvolutionTranspose(const Instruction& inst,
                                                            const Cotangent& ct,
                                                            TransposeContext& ctx) {
  const bool x_linear = ctx.IsLinear(inst.operand(0));
  const bool k_linear = ctx.IsLinear(inst.operand(1));
  if (x_linear && k_linear) {
    return hlo::OpError(inst, "cannot be transposed: both operands depend on the linear inputs");
  }
  ASSIGN_OR_RETURN(hlo::ConvDims cd, hlo::GetConvDims(inst));
  for (const hlo::ConvWindowDim& w : cd.window) {
    if (w.reversed) {
      return hlo::OpError(inst, "cannot be transposed yet: its window is reversed "
                                "(rhs_reversal); forward mode (jvp) works");
    }
  }
  const Shape& x_shape = inst.operand(0)->shape();
  const Shape& k_shape = inst.operand(1)->shape();
  const Shape& y_shape = inst.shape();
  const int64_t rank = x_shape.rank();
  const size_t ns = cd.window.size();
  Emitter& e = ctx.emitter();
  std::vector<Cotangent> out = NoCotangents(inst);
  const std::string y_labels = Labels(rank, cd.out_batch, 'b', cd.out_feature, 'f', cd.out_spatial);

  if (x_linear) {
    ASSIGN_OR_RETURN(Instruction * k, ctx.Primal(inst.operand(1)));
    hlo::IntListList window;
    for (size_t s = 0; s < ns; ++s) {
      const hlo::ConvWindowDim& w = cd.window[s];
      const DilatedExtents d = Extents(cd, s, x_shape, y_shape);
      const int64_t before = d.k - w.pad_lo - 1;
      const int64_t after = d.x + d.k - 1 - d.y - before;
      window.push_back({w.size, w.lhs_dilation, before, after, w.stride, w.rhs_dilation, 1});
    }
    const std::string labels = absl::StrCat(
        y_labels, "_", Labels(rank, cd.rhs_output_feature, 'i', cd.rhs_input_feature, 'o', cd.rhs_spatial),
        "->", Labels(rank, cd.lhs_batch, 'b', cd.lhs_feature, 'f', cd.lhs_spatial));
    const int64_t groups = std::max(cd.feature_group_count, cd.batch_group_count);
    std::vector<hlo::Attribute> attrs = {{"window", window}, {"dim_labels", labels}};
    if (groups > 1) {
      std::vector<int64_t> regrouped = k->shape().dims();
      regrouped[static_cast<size_t>(cd.rhs_output_feature)] /= groups;
      regrouped[static_cast<size_t>(cd.rhs_input_feature)] *= groups;
      k = MoveGroupAxis(e, k, cd.rhs_output_feature, cd.rhs_input_feature, groups, regrouped);
      attrs.push_back({"feature_group_count", groups});
    }
    std::vector<int64_t> dims = x_shape.dims();
    if (cd.batch_group_count > 1) {
      // The groups' input features side by side; the batch of one group.
      dims[static_cast<size_t>(cd.lhs_feature)] *= groups;
      dims[static_cast<size_t>(cd.lhs_batch)] /= groups;
    }
    Instruction* cx = e.Add(Opcode::kConvolution, Shape(x_shape.type(), dims), {ct.value, k},
                            std::move(attrs));
    if (cd.batch_group_count > 1) {
      cx = MoveGroupAxis(e, cx, cd.lhs_feature, cd.lhs_batch, groups, x_shape.dims());
    }
    out[0] = Cotangent::Of(cx);
  } else {
    ASSIGN_OR_RETURN(Instruction * x, ctx.Primal(inst.operand(0)));
    hlo::IntListList window;
    for (size_t s = 0; s < ns; ++s) {
      const hlo::ConvWindowDim& w = cd.window[s];
      const DilatedExtents d = Extents(cd, s, x_shape, y_shape);
      const int64_t after = (d.y - d.x) + (d.k - w.pad_lo - 1);
      window.push_back({y_shape.dim(cd.out_spatial[s]), w.rhs_dilation, w.pad_lo, after,
                        w.lhs_dilation, w.stride});
    }
    const std::string labels = absl::StrCat(
        Labels(rank, cd.lhs_feature, 'b', cd.lhs_batch, 'f', cd.lhs_spatial), "_",
        Labels(rank, cd.out_batch, 'i', cd.out_feature, 'o', cd.out_spatial), "->",
        Labels(rank, cd.rhs_input_feature, 'b', cd.rhs_output_feature, 'f', cd.rhs_spatial));
    std::vector<hlo::Attribute> attrs = {{"window", window}, {"dim_labels", labels}};
    // The sum over the batch runs within a feature group: feature groups
    // become batch groups, and batch groups feature groups.
    if (cd.feature_group_count > 1) attrs.push_back({"batch_group_count", cd.feature_group_count});
    if (cd.batch_group_count > 1) attrs.push_back({"feature_group_count", cd.batch_group_count});
    out[1] = Cotangent::Of(e.Add(Opcode::kConvolution, Shape(k_shape.type(), k_shape.dims()),
                                 {x, ct.value}, std::move(attrs)));
  }
  return out;
}

}  // namespace

void RegisterConvolutionTransposeRule(TransposeRuleRegistry& r) {
  r.Register(Opcode::kConvolution, ConvolutionTranspose);
}

}  // namespace sharc::autodiff
