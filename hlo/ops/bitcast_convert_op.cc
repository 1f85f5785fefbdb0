// bitcast-convert(x) -> T[...]: the bits of x read as type T, as they lie in
// memory (little-endian, XLA's CPU backend). Same width: the dims stay.
// Narrower T: a trailing dim of width(x)/width(T) is added (f32[3] ->
// u8[3,4]). Wider T: x's last dim must be width(T)/width(x) and goes
// (u8[3,4] -> f32[3]). The result type is read from the declared shape.
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
  const int64_t from = ByteWidth(in.type());
  const int64_t to = ByteWidth(out.type());
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

absl::StatusOr<Literal> EvaluateBitcastConvert(const Instruction& inst,
                                               absl::Span<const Literal* const> operands,
                                               EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferBitcastConvert(inst));
  Literal out(shape);
  if (out.size_bytes() != operands[0]->size_bytes()) {
    return OpError(inst, "has ", operands[0]->size_bytes(), " bytes in and ", out.size_bytes(),
                   " out");
  }
  if (out.size_bytes() > 0) {
    std::memcpy(out.untyped_data(), operands[0]->untyped_data(),
                static_cast<size_t>(out.size_bytes()));
  }
  return out;
}

}  // namespace

void RegisterBitcastConvertOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kBitcastConvert;
  def.min_operands = 1;
  def.max_operands = 1;
  def.infer_shape = InferBitcastConvert;
  def.evaluate = EvaluateBitcastConvert;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
