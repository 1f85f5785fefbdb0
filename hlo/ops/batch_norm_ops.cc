// Batch normalization over every dim but `feature_index` (XLA's three ops):
//
//   batch-norm-training(x, scale, offset)       -> (y, mean, variance)
//   batch-norm-inference(x, scale, offset, mean, variance) -> y
//   batch-norm-grad(x, scale, mean, variance, dy)          -> (dx, dscale, doffset)
//
// with y = (x - mean) / sqrt(variance + epsilon) * scale + offset, the
// variance biased (divided by the element count per feature), and the
// gradient of y with respect to x, scale and offset for training's mean and
// variance. The evaluator accumulates in double.
#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

enum class Form { kTraining, kInference, kGrad };

// Operands after x, each a vector over the features.
int64_t OperandCount(Form form) { return form == Form::kTraining ? 3 : 5; }

absl::StatusOr<double> Epsilon(const Instruction& inst) {
  double epsilon = 0;
  const std::string& text = inst.attr_string("epsilon");
  if (!absl::SimpleAtod(text, &epsilon) || !(epsilon >= 0)) {
    return OpError(inst, "epsilon must be a non-negative number, got '", text, "'");
  }
  return epsilon;
}

absl::StatusOr<Shape> InferBatchNorm(const Instruction& inst, Form form) {
  if (inst.operand_count() != OperandCount(form)) {
    return OpError(inst, "takes ", OperandCount(form), " operands, got ", inst.operand_count());
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& x = inst.operand(0)->shape();
  if (!IsFloatingPoint(x.type())) {
    return OpError(inst, "expects a floating-point operand, got ", x.ToString());
  }
  const int64_t feature = inst.attr_int("feature_index");
  if (feature < 0 || feature >= x.rank()) {
    return OpError(inst, "feature_index ", feature, " is outside the operand's rank ", x.rank());
  }
  RETURN_IF_ERROR(Epsilon(inst).status());
  const Shape features(x.type(), {x.dim(feature)});
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& expected = form == Form::kGrad && i == 4 ? x : features;
    if (inst.operand(i)->shape() != expected) {
      return OpError(inst, "operand ", i, " is ", inst.operand(i)->shape().ToString(),
                     "; expected ", expected.ToString());
    }
  }
  if (form == Form::kInference) return x;
  return Shape::Tuple({x, features, features});
}

// x's elements grouped by feature: element i has feature FeatureOf(i).
struct FeatureLayout {
  int64_t features, inner, count;  // count: elements per feature
  int64_t FeatureOf(int64_t i) const { return (i / inner) % features; }
};

FeatureLayout LayoutOf(const Shape& x, int64_t feature) {
  int64_t inner = 1;
  for (int64_t d = feature + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const int64_t features = x.dim(feature);
  return FeatureLayout{features, inner, features == 0 ? 0 : x.num_elements() / features};
}

std::vector<double> Doubles(const Literal& v) {
  std::vector<double> out(static_cast<size_t>(v.num_elements()));
  for (int64_t i = 0; i < v.num_elements(); ++i) out[static_cast<size_t>(i)] = v.GetAsDouble(i);
  return out;
}

Literal FromDoubles(const Shape& shape, const std::vector<double>& values) {
  Literal out(shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    out.SetFromDouble(i, values[static_cast<size_t>(i)]);
  }
  return out;
}

// Per-feature mean and biased variance of x.
void Moments(const std::vector<double>& x, const FeatureLayout& l, std::vector<double>& mean,
             std::vector<double>& variance) {
  mean.assign(static_cast<size_t>(l.features), 0.0);
  variance.assign(static_cast<size_t>(l.features), 0.0);
  if (l.count == 0) return;
  for (size_t i = 0; i < x.size(); ++i) mean[l.FeatureOf(i)] += x[i];
  for (double& m : mean) m /= static_cast<double>(l.count);
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - mean[l.FeatureOf(i)];
    variance[l.FeatureOf(i)] += d * d;
  }
  for (double& v : variance) v /= static_cast<double>(l.count);
}

absl::StatusOr<Literal> EvaluateBatchNorm(const Instruction& inst,
                                          absl::Span<const Literal* const> operands, Form form) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferBatchNorm(inst, form));
  ASSIGN_OR_RETURN(double epsilon, Epsilon(inst));
  const Shape& x_shape = operands[0]->shape();
  const FeatureLayout l = LayoutOf(x_shape, inst.attr_int("feature_index"));
  const std::vector<double> x = Doubles(*operands[0]);
  const std::vector<double> scale = Doubles(*operands[1]);
  const Shape features(x_shape.type(), {l.features});
  std::vector<double> mean, variance;
  if (form == Form::kTraining) {
    Moments(x, l, mean, variance);
  } else {
    mean = Doubles(*operands[form == Form::kGrad ? 2 : 3]);
    variance = Doubles(*operands[form == Form::kGrad ? 3 : 4]);
  }
  std::vector<double> rstd(static_cast<size_t>(l.features));
  for (size_t f = 0; f < rstd.size(); ++f) rstd[f] = 1.0 / std::sqrt(variance[f] + epsilon);

  if (form != Form::kGrad) {
    const std::vector<double> offset = Doubles(*operands[2]);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t f = static_cast<size_t>(l.FeatureOf(static_cast<int64_t>(i)));
      y[i] = (x[i] - mean[f]) * rstd[f] * scale[f] + offset[f];
    }
    Literal y_value = FromDoubles(x_shape, y);
    if (form == Form::kInference) return y_value;
    std::vector<Literal> out;
    out.push_back(std::move(y_value));
    out.push_back(FromDoubles(features, mean));
    out.push_back(FromDoubles(features, variance));
    return Literal::Tuple(std::move(out));
  }
  // dx = scale * rstd * (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) * rstd^2),
  // dscale = sum(dy * (x - mean)) * rstd, doffset = sum(dy).
  const std::vector<double> dy = Doubles(*operands[4]);
  std::vector<double> sum_dy(static_cast<size_t>(l.features), 0.0);
  std::vector<double> sum_dy_xc(static_cast<size_t>(l.features), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t f = static_cast<size_t>(l.FeatureOf(static_cast<int64_t>(i)));
    sum_dy[f] += dy[i];
    sum_dy_xc[f] += dy[i] * (x[i] - mean[f]);
  }
  const double n = static_cast<double>(l.count);
  std::vector<double> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t f = static_cast<size_t>(l.FeatureOf(static_cast<int64_t>(i)));
    const double xc = x[i] - mean[f];
    dx[i] = scale[f] * rstd[f] *
            (dy[i] - sum_dy[f] / n - xc * (sum_dy_xc[f] / n) * rstd[f] * rstd[f]);
  }
  std::vector<double> dscale(static_cast<size_t>(l.features));
  for (size_t f = 0; f < dscale.size(); ++f) dscale[f] = sum_dy_xc[f] * rstd[f];
  std::vector<Literal> out;
  out.push_back(FromDoubles(x_shape, dx));
  out.push_back(FromDoubles(features, dscale));
  out.push_back(FromDoubles(features, sum_dy));
  return Literal::Tuple(std::move(out));
}

OpDef BatchNormDef(Opcode opcode, Form form) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = static_cast<int>(OperandCount(form));
  def.max_operands = static_cast<int>(OperandCount(form));
  def.attributes = {{"epsilon", AttrKind::kEnum, true}, {"feature_index", AttrKind::kInt, true}};
  def.infer_shape = [form](const Instruction& inst) { return InferBatchNorm(inst, form); };
  def.evaluate = [form](const Instruction& inst, absl::Span<const Literal* const> operands,
                        EvalContext&) { return EvaluateBatchNorm(inst, operands, form); };
  return def;
}

}  // namespace

void RegisterBatchNormOps(OpRegistry& registry) {
  registry.Register(BatchNormDef(Opcode::kBatchNormTraining, Form::kTraining));
  registry.Register(BatchNormDef(Opcode::kBatchNormInference, Form::kInference));
  registry.Register(BatchNormDef(Opcode::kBatchNormGrad, Form::kGrad));
}

}  // namespace sharc::hlo
