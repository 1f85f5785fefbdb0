// bitcast-convert(x) -> T[...]: the bits of x read as type T, as they lie in
// memory (little-endian, XLA's CPU backend). Same width: the dims stay.
// Narrower T: a trailing dim of width(x)/width(T) is added (f32[3] ->
// u8[3,4]). Wider T: x's last dim must be width(T)/width(x) and goes
// (u8[3,4] -> f32[3]). The result type is read from the declared shape.
//
// bitcast(x) -> T[...]: x's bytes as an array of the declared shape, which
// must hold as many bytes. XLA defines it on the layouts in memory; sharc
// keeps every array row-major, and the parser refuses a bitcast whose
// shapes are written with layouts that reorder dimensions, so it is a
// reshape (of the same element type; hlo/passes/lower_for_compute.h
// rewrites it to one) or a reshape of bitcast-convert's bytes.
#include <cstring>

#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferBitcastConvert(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  if (!out.is_array()) return OpError(inst, "needs its (array) result shape written");
  for (PrimitiveType t : {in.type(), out.type()}) {
    if (t == PrimitiveType::kPred || t == PrimitiveType::kToken || ByteWidth(t) == 0) {
      return OpError(inst, "cannot reinterpret ", PrimitiveTypeName(t), " as bits");
    }
  }
  // In bits: XLA packs the sub-byte types (s4[8,2] <-> s8[8]).
  auto bits = [](PrimitiveType t) -> int64_t {
    if (t == PrimitiveType::kS2 || t == PrimitiveType::kU2) return 2;
    if (t == PrimitiveType::kS4 || t == PrimitiveType::kU4 || t == PrimitiveType::kF4E2M1FN) {
      return 4;
    }
    return ByteWidth(t) * 8;
  };
  const int64_t from = bits(in.type());
  const int64_t to = bits(out.type());
  std::vector<int64_t> dims = in.dims();
  if (from > to) {
    dims.push_back(from / to);
  } else if (from < to) {
    if (dims.empty() || dims.back() != to / from) {
      return OpError(inst, "from ", in.ToString(), " to ", PrimitiveTypeName(out.type()),
                     " needs a last dimension of ", to / from);
    }
    dims.pop_back();
  }
  Shape inferred(out.type(), dims);
  RETURN_IF_ERROR(ExpectDeclared(inst, inferred));
  return inferred;
}

// The operand's bytes as a value of `shape` (which holds as many).
absl::StatusOr<Literal> SameBytes(const Instruction& inst, const Literal& operand,
                                  const Shape& shape) {
  Literal out(shape);
  if (out.size_bytes() != operand.size_bytes()) {
    return OpError(inst, "has ", operand.size_bytes(), " bytes in and ", out.size_bytes(), " out");
  }
  if (out.size_bytes() > 0) {
    std::memcpy(out.untyped_data(), operand.untyped_data(), static_cast<size_t>(out.size_bytes()));
  }
  return out;
}

absl::StatusOr<Literal> EvaluateBitcastConvert(const Instruction& inst,
                                               absl::Span<const Literal* const> operands,
                                               EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferBitcastConvert(inst));
  return SameBytes(inst, *operands[0], shape);
}

absl::StatusOr<Shape> InferBitcast(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  if (!out.is_array()) return OpError(inst, "needs its (array) result shape written");
  for (PrimitiveType t : {in.type(), out.type()}) {
    if (t == PrimitiveType::kToken || ByteWidth(t) == 0) {
      return OpError(inst, "cannot reinterpret ", PrimitiveTypeName(t), " as bytes");
    }
  }
  const __int128 in_bytes = __int128{in.num_elements()} * ByteWidth(in.type());
  const __int128 out_bytes = __int128{out.num_elements()} * ByteWidth(out.type());
  if (in_bytes != out_bytes) {
    return OpError(inst, "from ", in.ToString(), " to ", out.ToString(),
                   " changes the number of bytes (", static_cast<int64_t>(in_bytes), " to ",
                   static_cast<int64_t>(out_bytes), ")");
  }
  return out;
}

absl::StatusOr<Literal> EvaluateBitcast(const Instruction& inst,
                                        absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferBitcast(inst));
  return SameBytes(inst, *operands[0], shape);
}

}  // namespace

void RegisterBitcastConvertOp(OpRegistry& registry) {
  {
    OpDef def;
    def.opcode = Opcode::kBitcast;
    def.min_operands = 1;
    def.max_operands = 1;
    def.infer_shape = InferBitcast;
    def.evaluate = EvaluateBitcast;
    registry.Register(std::move(def));
  }
  OpDef def;
  def.opcode = Opcode::kBitcastConvert;
  def.min_operands = 1;
  def.max_operands = 1;
  def.infer_shape = InferBitcastConvert;
  def.evaluate = EvaluateBitcastConvert;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
