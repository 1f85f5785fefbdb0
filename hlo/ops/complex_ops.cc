// complex(re, im) -> c64/c128, real(z) and imag(z) -> f32/f64: XLA's ops that
// build and take apart complex numbers.
//
//   %z = c64[2] complex(f32[2] %re, f32[2] %im)
//   %re = f32[2] real(c64[2] %z)
//
// As in XLA, real and imag also take real floats: real(x) is x and imag(x)
// is zero. The other ops that compute with complex values are in
// complex_semantics.cc.
#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferComplex(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& re = inst.operand(0)->shape();
  const Shape& im = inst.operand(1)->shape();
  if (re != im || (re.type() != PrimitiveType::kF32 && re.type() != PrimitiveType::kF64)) {
    return OpError(inst, "needs two f32 or two f64 operands of one shape, got ", re.ToString(),
                   " and ", im.ToString());
  }
  return Shape(re.type() == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128,
               re.dims());
}

absl::StatusOr<Shape> InferComponent(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& z = inst.operand(0)->shape();
  if (z.type() == PrimitiveType::kC64) return Shape(PrimitiveType::kF32, z.dims());
  if (z.type() == PrimitiveType::kC128) return Shape(PrimitiveType::kF64, z.dims());
  if (IsFloatingPoint(z.type())) return z;
  return OpError(inst, "needs a complex or floating-point operand, got ", z.ToString());
}

absl::StatusOr<Literal> EvaluateComponent(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferComponent(inst));
  const Literal& z = *operands[0];
  if (!IsComplex(z.shape().type())) {
    return inst.opcode() == Opcode::kReal ? z : Literal(shape);
  }
  Literal out(shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const Complex128 v = GetComplex(z, i);
    out.SetFromDouble(i, inst.opcode() == Opcode::kReal ? v.real() : v.imag());
  }
  return out;
}

absl::StatusOr<Literal> EvaluateComplex(const Instruction& inst,
                                        absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferComplex(inst));
  Literal out(shape);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    SetComplex(out, i, Complex128(operands[0]->GetAsDouble(i), operands[1]->GetAsDouble(i)));
  }
  return out;
}

}  // namespace

void RegisterComplexOps(OpRegistry& registry) {
  OpTraits elementwise;
  elementwise.elementwise = true;
  {
    OpDef def;
    def.opcode = Opcode::kComplex;
    def.min_operands = 2;
    def.max_operands = 2;
    def.infer_shape = InferComplex;
    def.evaluate = EvaluateComplex;
    def.traits = elementwise;
    registry.Register(std::move(def));
  }
  for (Opcode op : {Opcode::kReal, Opcode::kImag}) {
    OpDef def;
    def.opcode = op;
    def.min_operands = 1;
    def.max_operands = 1;
    def.infer_shape = InferComponent;
    def.evaluate = EvaluateComponent;
    def.traits = elementwise;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo
