// What the ops that take complex values (c64, c128) compute with them. The
// op family files define each op on real types; this file adds, once, the
// complex meaning of the ops sharc runs on complex values, by wrapping their
// shape inference and evaluator: a complex operand or result goes to the
// definitions below, everything else to the family file's. Every other op
// refuses complex values with "unsupported: complex <op>"
// (CheckComplexSupported, called by CheckRunnableTypes before a run).
//
//   %z = c64[2] multiply(c64[2] %x, c64[2] %y)      complex product
//   %m = f32[2] abs(c64[2] %z)                      magnitude, a real
//   %e = pred[2] compare(%x, %y), direction=EQ      EQ and NE only
//   %w = c64[2] convert(f32[2] %r)                  real -> complex (imag 0)
#include <cmath>
#include <complex>

#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/byte_moving_ops.h"
#include "hlo/ops/complex_semantics.h"
#include "hlo/ops/identity_custom_calls.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

bool HasComplexOperandOrResult(const Instruction& inst) {
  if (inst.shape().is_array() && IsComplex(inst.shape().type())) return true;
  for (const Instruction* operand : inst.operands()) {
    if (operand->shape().is_array() && IsComplex(operand->shape().type())) return true;
  }
  return false;
}

PrimitiveType ComponentType(PrimitiveType complex) {
  return complex == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
}

// ------------------------------------------------------------ elementwise --

absl::StatusOr<Shape> InferComplexElementwise(const Instruction& inst) {
  for (int64_t i = 0; i < inst.operand_count(); ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& x = inst.operand(0)->shape();
  for (const Instruction* operand : inst.operands()) {
    if (operand->shape() != x) {
      return OpError(inst, "needs operands of one shape, got ", x.ToString(), " and ",
                     operand->shape().ToString());
    }
  }
  switch (inst.opcode()) {
    case Opcode::kAbs: return Shape(ComponentType(x.type()), x.dims());
    case Opcode::kCompare: {
      const std::string& direction = inst.attr_string("direction");
      if (direction != "EQ" && direction != "NE") {
        return OpError(inst, "compares complex values with EQ or NE only, got ", direction);
      }
      return Shape(PrimitiveType::kPred, x.dims());
    }
    default: return x;
  }
}

Complex128 Sign(Complex128 z) { return z == Complex128(0) ? z : z / std::abs(z); }

absl::StatusOr<Literal> EvaluateComplexElementwise(const Instruction& inst,
                                                   absl::Span<const Literal* const> operands) {
  ASSIGN_OR_RETURN(Shape shape, InferComplexElementwise(inst));
  Literal out(shape);
  const Opcode op = inst.opcode();
  const bool ne = op == Opcode::kCompare && inst.attr_string("direction") == "NE";
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const Complex128 a = GetComplex(*operands[0], i);
    const Complex128 b = operands.size() > 1 ? GetComplex(*operands[1], i) : Complex128();
    switch (op) {
      case Opcode::kAbs: out.SetFromDouble(i, std::abs(a)); continue;
      case Opcode::kCompare: out.data<bool>()[i] = (a == b) != ne; continue;
      case Opcode::kAdd: SetComplex(out, i, a + b); continue;
      case Opcode::kSubtract: SetComplex(out, i, a - b); continue;
      case Opcode::kMultiply: SetComplex(out, i, a * b); continue;
      case Opcode::kDivide: SetComplex(out, i, a / b); continue;
      case Opcode::kNegate: SetComplex(out, i, -a); continue;
      case Opcode::kExp: SetComplex(out, i, std::exp(a)); continue;
      case Opcode::kLog: SetComplex(out, i, std::log(a)); continue;
      case Opcode::kSqrt: SetComplex(out, i, std::sqrt(a)); continue;
      case Opcode::kSign: SetComplex(out, i, Sign(a)); continue;
      case Opcode::kSin: SetComplex(out, i, std::sin(a)); continue;
      case Opcode::kCos: SetComplex(out, i, std::cos(a)); continue;
      case Opcode::kTan: SetComplex(out, i, std::tan(a)); continue;
      case Opcode::kTanh: SetComplex(out, i, std::tanh(a)); continue;
      case Opcode::kExpm1: SetComplex(out, i, ComplexExpm1(a)); continue;
      case Opcode::kLog1p: SetComplex(out, i, ComplexLog1p(a)); continue;
      case Opcode::kLogistic: SetComplex(out, i, 1.0 / (1.0 + std::exp(-a))); continue;
      case Opcode::kRsqrt: SetComplex(out, i, 1.0 / std::sqrt(a)); continue;
      case Opcode::kPower: SetComplex(out, i, ComplexPower(a, b)); continue;
      case Opcode::kAtan2: SetComplex(out, i, ComplexAtan2(a, b)); continue;
      default: return OpError(inst, "unsupported: complex ", OpcodeName(op));
    }
  }
  return out;
}

// ---------------------------------------------------------------- convert --

absl::StatusOr<Shape> InferComplexConvert(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& x = inst.operand(0)->shape();
  if (!inst.shape().is_array() || !IsComplex(inst.shape().type())) {
    // As in XLA: a complex value has no single real to become.
    return OpError(inst, "cannot convert ", x.ToString(),
                   " to a real type; take its real or imag part");
  }
  if (x.type() == PrimitiveType::kPred || x.type() == PrimitiveType::kToken) {
    return OpError(inst, "cannot convert ", x.ToString(), " to ", inst.shape().ToString());
  }
  return Shape(inst.shape().type(), x.dims());
}

absl::StatusOr<Literal> EvaluateComplexConvert(const Instruction& inst,
                                               absl::Span<const Literal* const> operands) {
  ASSIGN_OR_RETURN(Shape shape, InferComplexConvert(inst));
  Literal out(shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) SetComplex(out, i, GetComplex(*operands[0], i));
  return out;
}

// ---------------------------------------------------------------- select --

absl::StatusOr<Literal> EvaluateComplexSelect(const Instruction& inst,
                                              absl::Span<const Literal* const> operands) {
  Literal out(inst.shape());
  const Literal& pred = *operands[0];
  const bool scalar_pred = pred.num_elements() == 1 && pred.shape().rank() == 0;
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const bool take_first = pred.data<bool>()[scalar_pred ? 0 : i];
    CopyElement(*operands[take_first ? 1 : 2], i, out, i);
  }
  return out;
}

// ------------------------------------------------------------------ iota --

absl::StatusOr<Literal> EvaluateComplexIota(const Instruction& inst, const Shape& shape) {
  const int64_t dim = inst.attr_int("iota_dimension");
  Literal out(shape);
  int64_t i = 0;
  ForEachIndex(shape.dims(), [&](const std::vector<int64_t>& index) {
    SetComplex(out, i++, Complex128(static_cast<double>(index[static_cast<size_t>(dim)]), 0));
  });
  return out;
}

// Replaces `opcode`'s definition by one that sends complex values to
// `infer`/`evaluate` (either may be null: then the family file's serves
// both kinds of values).
void WrapForComplex(OpRegistry& registry, Opcode opcode, InferShapeFn infer,
                    std::function<absl::StatusOr<Literal>(const Instruction&,
                                                          absl::Span<const Literal* const>,
                                                          const Shape&)>
                        evaluate) {
  OpDef def = *registry.Find(opcode);
  InferShapeFn real_infer = def.infer_shape;
  if (infer) {
    def.infer_shape = [real_infer, infer](const Instruction& inst) {
      return HasComplexOperandOrResult(inst) ? infer(inst) : real_infer(inst);
    };
  }
  EvaluateFn real_evaluate = def.evaluate;
  InferShapeFn shape_of = def.infer_shape;
  def.evaluate = [real_evaluate, evaluate, shape_of](
                     const Instruction& inst, absl::Span<const Literal* const> operands,
                     EvalContext& ctx) -> absl::StatusOr<Literal> {
    if (!HasComplexOperandOrResult(inst)) return real_evaluate(inst, operands, ctx);
    RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
    ASSIGN_OR_RETURN(Shape shape, shape_of(inst));
    return evaluate(inst, operands, shape);
  };
  registry.Register(std::move(def));
}

// XLA's complex elementwise ops (shape_inference.cc accepts complex operands
// for these; cbrt, the inverse and hyperbolic functions other than tanh,
// erf, rounding, maximum, minimum, remainder and clamp take reals only).
constexpr Opcode kComplexElementwise[] = {
    Opcode::kAbs,  Opcode::kCompare, Opcode::kAdd,  Opcode::kSubtract, Opcode::kMultiply,
    Opcode::kDivide, Opcode::kNegate, Opcode::kExp, Opcode::kLog,      Opcode::kSqrt,
    Opcode::kSign, Opcode::kSin,     Opcode::kCos,  Opcode::kTan,      Opcode::kTanh,
    Opcode::kExpm1, Opcode::kLog1p,  Opcode::kLogistic, Opcode::kRsqrt, Opcode::kPower,
    Opcode::kAtan2};

// Beyond the ops that move bytes (byte_moving_ops.h): ops that call
// computations on scalar literals (whose complex ops are the ones above), or
// compute complex values themselves (dot, convolution, fft, cholesky,
// triangular-solve, complex/real/imag, iota). A reduce, reduce-window or
// scatter folds with any computation of those ops; the combinable reducers
// (add, multiply) take the fast path of hlo::ApplyBinaryReducer.
constexpr Opcode kComputesComplexValues[] = {
    Opcode::kComplex,     Opcode::kReal,         Opcode::kImag,
    Opcode::kFft,         Opcode::kCholesky,     Opcode::kTriangularSolve,
    Opcode::kSelect,      Opcode::kConvert,      Opcode::kDot,
    Opcode::kConvolution, Opcode::kRaggedDot,    Opcode::kIota,
    Opcode::kScatter,     Opcode::kReduce,       Opcode::kReduceWindow,
    Opcode::kSort,        Opcode::kMap,          Opcode::kAllReduceDone,
    Opcode::kMapReduceSum, Opcode::kMapReduceMean,
    // Collectives that combine values: the runtime's add or multiply complex
    // values (runtime/reduction.cc) and refuses other reducers of any type.
    Opcode::kAllReduce,   Opcode::kAllReduceStart, Opcode::kReduceScatter,
    Opcode::kPSum,        Opcode::kPSumScatter};

}  // namespace

void AddComplexSemantics(OpRegistry& registry) {
  for (Opcode op : kComplexElementwise) {
    WrapForComplex(registry, op, InferComplexElementwise,
                   [](const Instruction& inst, absl::Span<const Literal* const> operands,
                      const Shape&) { return EvaluateComplexElementwise(inst, operands); });
  }
  WrapForComplex(registry, Opcode::kConvert, InferComplexConvert,
                 [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    const Shape&) { return EvaluateComplexConvert(inst, operands); });
  WrapForComplex(registry, Opcode::kSelect, nullptr,
                 [](const Instruction& inst, absl::Span<const Literal* const> operands,
                    const Shape&) { return EvaluateComplexSelect(inst, operands); });
  WrapForComplex(registry, Opcode::kIota, nullptr,
                 [](const Instruction& inst, absl::Span<const Literal* const>,
                    const Shape& shape) { return EvaluateComplexIota(inst, shape); });
}

absl::Status CheckComplexSupported(const Instruction& inst) {
  if (!HasComplexOperandOrResult(inst)) return absl::OkStatus();
  const Opcode op = inst.opcode();
  for (Opcode supported : kComplexElementwise) {
    if (op == supported) return absl::OkStatus();
  }
  if (MovesValuesAsBytes(op)) return absl::OkStatus();
  for (Opcode supported : kComputesComplexValues) {
    if (op == supported) return absl::OkStatus();
  }
  // Annotations (Sharding, MoveToHost, ...) and manual-region markers pass
  // their operand's elements through.
  if (op == Opcode::kCustomCall) {
    const std::string& target = inst.attr_string("custom_call_target");
    if (IsIdentityCustomCallTarget(target) || IsManualRegionMarker(target)) {
      return absl::OkStatus();
    }
  }
  return absl::UnimplementedError(absl::StrCat("unsupported: complex ", OpcodeName(op),
                                               " (sharc computes complex values with a subset of "
                                               "ops only), in ",
                                               inst.Describe()));
}

}  // namespace sharc::hlo
