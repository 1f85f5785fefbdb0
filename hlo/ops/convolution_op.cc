// convolution: XLA's ConvWithGeneralPadding. Dimension numbers come from
// `dim_labels`, the window (size, stride, padding -- negative too --, lhs
// dilation for transposed and rhs dilation for atrous convolutions) from
// `window`, grouping from feature_group_count / batch_group_count; all are
// read and checked by hlo/ops/convolution_dims.h. As for dot, the result's
// element type is the declared one.
#include <algorithm>
#include <limits>
#include <vector>

#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ops/convolution_dims.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferConvolution(const Instruction& inst) {
  ASSIGN_OR_RETURN(ConvDims cd, GetConvDims(inst));
  PrimitiveType type =
      inst.shape().is_array() ? inst.shape().type() : inst.operand(0)->shape().type();
  Shape result(type, cd.out_dims);
  RETURN_IF_ERROR(ValidateShape(result)) << " (convolution result, in " << inst.Describe() << ")";
  return result;
}

// Integer results saturate to the result type's range, as XLA's evaluator
// does; the sum itself is exact in int64 for any realistic operand range.
int64_t Saturate(int64_t value, PrimitiveType type) {
  const int bits = static_cast<int>(ByteWidth(type)) * 8;
  if (IsSignedInteger(type)) {
    if (bits >= 64) return value;
    const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
    return std::clamp(value, -hi - 1, hi);
  }
  if (value < 0) return 0;
  if (bits >= 64) return value;
  return std::min(value, (int64_t{1} << bits) - 1);
}

template <typename Acc>
std::vector<Acc> Values(const Literal& literal) {
  std::vector<Acc> v(static_cast<size_t>(literal.num_elements()));
  for (int64_t i = 0; i < literal.num_elements(); ++i) {
    if constexpr (std::is_same_v<Acc, Complex128>) {
      v[static_cast<size_t>(i)] = GetComplex(literal, i);
    } else if constexpr (std::is_same_v<Acc, double>) {
      v[static_cast<size_t>(i)] = literal.GetAsDouble(i);
    } else {
      v[static_cast<size_t>(i)] = literal.GetAsInt64(i);
    }
  }
  return v;
}

// The direct definition: for every output element, the sum over the kernel
// window and the input features of its group. Accumulates in Acc (double or
// int64) and rounds once on store.
template <typename Acc>
Literal ComputeConvolution(const Shape& result_shape, const Literal& lhs_value,
                           const Literal& rhs_value, const ConvDims& cd) {
  const Shape& lhs = lhs_value.shape();
  const Shape& rhs = rhs_value.shape();
  std::vector<Acc> l = Values<Acc>(lhs_value);
  std::vector<Acc> r = Values<Acc>(rhs_value);
  std::vector<int64_t> ls = RowMajorStrides(lhs.dims());
  std::vector<int64_t> rs = RowMajorStrides(rhs.dims());
  const size_t ns = cd.window.size();
  const int64_t in_per_group = rhs.dim(cd.rhs_input_feature);
  const int64_t kernel_out = rhs.dim(cd.rhs_output_feature);
  const int64_t out_per_feature_group = kernel_out / cd.feature_group_count;
  const int64_t out_per_batch_group = kernel_out / cd.batch_group_count;
  const int64_t batch_per_group = lhs.dim(cd.lhs_batch) / cd.batch_group_count;
  std::vector<int64_t> window_sizes;
  for (const ConvWindowDim& w : cd.window) window_sizes.push_back(w.size);

  Literal result(result_shape);
  int64_t out_index = 0;
  ForEachIndex(result_shape.dims(), [&](const std::vector<int64_t>& out) {
    const int64_t f = out[static_cast<size_t>(cd.out_feature)];
    const int64_t feature_group = f / out_per_feature_group;
    const int64_t batch_group = f / out_per_batch_group;
    const int64_t b = batch_group * batch_per_group + out[static_cast<size_t>(cd.out_batch)];
    const int64_t lbase = b * ls[static_cast<size_t>(cd.lhs_batch)] +
                          feature_group * in_per_group * ls[static_cast<size_t>(cd.lhs_feature)];
    const int64_t rbase = f * rs[static_cast<size_t>(cd.rhs_output_feature)];
    Acc sum = 0;
    ForEachIndex(window_sizes, [&](const std::vector<int64_t>& k) {
      int64_t lo = lbase, ro = rbase;
      for (size_t s = 0; s < ns; ++s) {
        const ConvWindowDim& w = cd.window[s];
        // Position in the padded, lhs-dilated input; dilation holes and
        // padding hold zeros and contribute nothing.
        int64_t p = out[static_cast<size_t>(cd.out_spatial[s])] * w.stride +
                    k[s] * w.rhs_dilation - w.pad_lo;
        if (p < 0 || p % w.lhs_dilation != 0) return;
        int64_t i = p / w.lhs_dilation;
        if (i >= lhs.dim(cd.lhs_spatial[s])) return;
        lo += i * ls[static_cast<size_t>(cd.lhs_spatial[s])];
        const int64_t kernel_index = w.reversed ? w.size - 1 - k[s] : k[s];
        ro += kernel_index * rs[static_cast<size_t>(cd.rhs_spatial[s])];
      }
      const int64_t lf = ls[static_cast<size_t>(cd.lhs_feature)];
      const int64_t rf = rs[static_cast<size_t>(cd.rhs_input_feature)];
      for (int64_t c = 0; c < in_per_group; ++c) {
        sum += l[static_cast<size_t>(lo + c * lf)] * r[static_cast<size_t>(ro + c * rf)];
      }
    });
    if constexpr (std::is_same_v<Acc, Complex128>) {
      SetComplex(result, out_index, sum);
    } else if constexpr (std::is_same_v<Acc, double>) {
      result.SetFromDouble(out_index, sum);
    } else {
      result.SetFromInt64(out_index, Saturate(sum, result_shape.type()));
    }
    ++out_index;
  });
  return result;
}

absl::StatusOr<Literal> EvaluateConvolution(const Instruction& inst,
                                            absl::Span<const Literal* const> operands,
                                            EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(ConvDims cd, GetConvDims(inst));
  ASSIGN_OR_RETURN(Shape result_shape, InferConvolution(inst));
  if (IsComplex(result_shape.type())) {
    return ComputeConvolution<Complex128>(result_shape, *operands[0], *operands[1], cd);
  }
  if (IsFloatingPoint(result_shape.type())) {
    return ComputeConvolution<double>(result_shape, *operands[0], *operands[1], cd);
  }
  if (result_shape.type() == PrimitiveType::kPred) {
    return OpError(inst, "has a pred result; convolution needs a numeric result type");
  }
  return ComputeConvolution<int64_t>(result_shape, *operands[0], *operands[1], cd);
}

}  // namespace

void RegisterConvolutionOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kConvolution;
  def.min_operands = 2;
  def.max_operands = 2;
  def.attributes = {{"window", AttrKind::kWindow},
                    {"dim_labels", AttrKind::kDimLabels, /*required=*/true},
                    {"feature_group_count", AttrKind::kInt},
                    {"batch_group_count", AttrKind::kInt}};
  def.infer_shape = InferConvolution;
  def.evaluate = EvaluateConvolution;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
