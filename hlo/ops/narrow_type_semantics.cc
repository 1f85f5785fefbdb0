// Convert and select on the narrow types (hlo/ir/narrow_types.h), and the
// check that nothing else meets them at run time.
//
//   %q = f8e4m3fn[4] convert(f32[4] %x)     rounds to nearest even; beyond
//                                           448 is NaN (e4m3fn has no inf)
//   %w = f32[4] convert(f8e4m3fn[4] %q)     exact
//   %i = s4[4] convert(f32[4] %x)           saturates to [-8, 7], NaN is 0
//   %j = s4[4] convert(s32[4] %n)           keeps the low 4 bits
#include "hlo/ops/narrow_type_semantics.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/ops/byte_moving_ops.h"
#include "hlo/ops/identity_custom_calls.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

bool IsNarrowArray(const Shape& shape) { return shape.is_array() && IsNarrowType(shape.type()); }

// The first narrow element type among `inst`'s result and operands, or kInvalid.
PrimitiveType FirstNarrowType(const Instruction& inst) {
  if (IsNarrowArray(inst.shape())) return inst.shape().type();
  for (const Instruction* operand : inst.operands()) {
    if (IsNarrowArray(operand->shape())) return operand->shape().type();
  }
  return PrimitiveType::kInvalid;
}

// `x`'s values in the type the narrow type computes in (exact).
Literal Widened(const Literal& x) {
  Literal wide(Shape(ComputeTypeOfNarrow(x.shape().type()), x.shape().dims()));
  const bool integer = IsSubByteInteger(x.shape().type());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    if (integer) {
      wide.SetFromInt64(i, x.GetAsInt64(i));
    } else {
      wide.SetFromDouble(i, x.GetAsDouble(i));
    }
  }
  return wide;
}

absl::StatusOr<Literal> ConvertToNarrow(const Instruction& inst, const Literal& x) {
  Literal out(inst.shape());
  const PrimitiveType from = x.shape().type();
  const bool integer_to_integer = IsSubByteInteger(inst.shape().type()) &&
                                  (IsInteger(from) || from == PrimitiveType::kPred);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if (integer_to_integer) {
      out.SetFromInt64(i, x.GetAsInt64(i));
    } else {
      out.SetFromDouble(i, x.GetAsDouble(i));
    }
  }
  return out;
}

}  // namespace

void AddNarrowTypeSemantics(OpRegistry& registry) {
  {
    OpDef def = *registry.Find(Opcode::kConvert);
    EvaluateFn convert = def.evaluate;
    def.evaluate = [convert](const Instruction& inst, absl::Span<const Literal* const> operands,
                             EvalContext& ctx) -> absl::StatusOr<Literal> {
      if (FirstNarrowType(inst) == PrimitiveType::kInvalid) return convert(inst, operands, ctx);
      RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
      const Literal& x = *operands[0];
      if (IsNarrowArray(inst.shape())) {
        if (!IsNarrowArray(x.shape())) return ConvertToNarrow(inst, x);
        return ConvertToNarrow(inst, Widened(x));
      }
      // From a narrow type: its exact wide values, converted as they are.
      const Literal wide = Widened(x);
      const Literal* wide_operands[] = {&wide};
      return convert(inst, wide_operands, ctx);
    };
    registry.Register(std::move(def));
  }
  {
    OpDef def = *registry.Find(Opcode::kSelect);
    EvaluateFn select = def.evaluate;
    def.evaluate = [select](const Instruction& inst, absl::Span<const Literal* const> operands,
                            EvalContext& ctx) -> absl::StatusOr<Literal> {
      if (!IsNarrowArray(inst.shape())) return select(inst, operands, ctx);
      RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
      Literal out(inst.shape());
      const Literal& pred = *operands[0];
      const bool scalar_pred = pred.shape().rank() == 0;
      for (int64_t i = 0; i < out.num_elements(); ++i) {
        const bool take_first = pred.data<bool>()[scalar_pred ? 0 : i];
        out.untyped_data()[i] = operands[take_first ? 1 : 2]->untyped_data()[i];
      }
      return out;
    };
    registry.Register(std::move(def));
  }
}

bool HandlesNarrowValues(const Instruction& inst) {
  // The ops that move bytes (byte_moving_ops.h), and convert and select,
  // which this file wraps.
  const Opcode op = inst.opcode();
  if (MovesValuesAsBytes(op) || op == Opcode::kConvert || op == Opcode::kSelect ||
      op == Opcode::kBitcastConvert) {
    return true;
  }
  if (inst.opcode() == Opcode::kCustomCall) {
    const std::string& target = inst.attr_string("custom_call_target");
    return IsIdentityCustomCallTarget(target) || IsManualRegionMarker(target);
  }
  return false;
}

absl::Status CheckNarrowTypeSupported(const Instruction& inst) {
  const PrimitiveType type = FirstNarrowType(inst);
  if (type == PrimitiveType::kInvalid || HandlesNarrowValues(inst)) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "unsupported: ", PrimitiveTypeName(type), " ", OpcodeName(inst.opcode()),
      " (sharc computes with ", PrimitiveTypeName(type),
      " values through convert and data movement, and runs elementwise ops, dots and "
      "convolutions on them in ", PrimitiveTypeName(ComputeTypeOfNarrow(type)),
      "; convert to a wider type first), in ", inst.Describe()));
}

}  // namespace sharc::hlo
