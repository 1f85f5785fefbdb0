// Ops that produce values without array operands: parameters, constants,
// iota, and the device-identity ops partition-id and replica-id.
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferParameter(const Instruction& inst) {
  if (inst.parameter_number() < 0) {
    return OpError(inst, "has invalid parameter number ", inst.parameter_number());
  }
  if (!inst.shape().valid()) return OpError(inst, "has no shape");
  RETURN_IF_ERROR(ValidateShape(inst.shape())) << ", in " << inst.Describe();
  return inst.shape();
}

absl::StatusOr<Literal> EvaluateParameter(const Instruction& inst,
                                          absl::Span<const Literal* const>, EvalContext&) {
  // Parameters are bound by the interpreter from the call's arguments; an
  // evaluate call means the interpreter lost track of a binding.
  return absl::InternalError(absl::StrCat("parameter ", inst.parameter_number(),
                                          " is bound by the interpreter and cannot be evaluated, "
                                          "in ",
                                          inst.Describe()));
}

absl::StatusOr<Shape> InferConstant(const Instruction& inst) {
  const Shape& literal_shape = inst.literal().shape();
  if (!literal_shape.valid()) return OpError(inst, "has no literal value");
  RETURN_IF_ERROR(ValidateShape(literal_shape)) << ", in " << inst.Describe();
  if (literal_shape != inst.shape()) {
    return OpError(inst, "literal has shape ", literal_shape.ToString(), " but the instruction declares ",
                   inst.shape().ToString());
  }
  return literal_shape;
}

absl::StatusOr<Literal> EvaluateConstant(const Instruction& inst, absl::Span<const Literal* const>,
                                         EvalContext&) {
  return inst.literal();
}

absl::StatusOr<Shape> InferIota(const Instruction& inst) {
  const Shape& shape = inst.shape();
  if (!shape.is_array()) {
    return OpError(inst, "must produce an array, got ", shape.ToString());
  }
  RETURN_IF_ERROR(ValidateShape(shape)) << ", in " << inst.Describe();
  if (shape.type() == PrimitiveType::kPred) {
    return OpError(inst, "needs a numeric element type, got ", shape.ToString());
  }
  const AttrValue* value = inst.attr("iota_dimension");
  const int64_t* dim = value ? std::get_if<int64_t>(value) : nullptr;
  if (dim == nullptr) return OpError(inst, "needs an integer attribute 'iota_dimension'");
  if (*dim < 0 || *dim >= shape.rank()) {
    return OpError(inst, "iota_dimension ", *dim, " is out of range for rank-", shape.rank(),
                   " output");
  }
  return shape;
}

// Converts an index to an element of type T (f16/bf16 round from float).
template <typename T>
T FromInt64(int64_t v) {
  if constexpr (kIsLowPrecisionFloat<T>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

absl::StatusOr<Literal> EvaluateIota(const Instruction& inst, absl::Span<const Literal* const>,
                                     EvalContext&) {
  ASSIGN_OR_RETURN(Shape shape, InferIota(inst));
  const int64_t dim = inst.attr_int("iota_dimension");
  Literal out(shape);
  // The value at a linear index is its coordinate along `dim`: divide by the
  // dimension's row-major stride and wrap by its size.
  const int64_t stride = RowMajorStrides(shape.dims())[static_cast<size_t>(dim)];
  const int64_t size = shape.dim(dim);
  DispatchPrimitiveType(shape.type(), [&](auto tag) {
    using T = decltype(tag);
    absl::Span<T> data = out.data<T>();
    for (int64_t i = 0; i < static_cast<int64_t>(data.size()); ++i) {
      data[static_cast<size_t>(i)] = FromInt64<T>((i / stride) % size);
    }
  });
  return out;
}

// partition-id and replica-id: always u32[] as in XLA.
absl::StatusOr<Shape> InferDeviceId(const Instruction& inst) {
  return Shape::Scalar(PrimitiveType::kU32);
}

// Fields are assigned one by one: GCC's -Wextra flags designated
// initializers that skip members.
OpDef SourceDef(Opcode opcode, InferShapeFn infer_shape, EvaluateFn evaluate) {
  OpDef def;
  def.opcode = opcode;
  def.infer_shape = std::move(infer_shape);
  def.evaluate = std::move(evaluate);
  return def;
}

absl::StatusOr<Literal> EvaluatePartitionId(const Instruction&, absl::Span<const Literal* const>,
                                            EvalContext& context) {
  return Literal::Scalar<uint32_t>(static_cast<uint32_t>(context.partition_id()));
}

absl::StatusOr<Literal> EvaluateReplicaId(const Instruction&, absl::Span<const Literal* const>,
                                          EvalContext& context) {
  return Literal::Scalar<uint32_t>(static_cast<uint32_t>(context.replica_id()));
}

}  // namespace

void RegisterSourceOps(OpRegistry& registry) {
  OpDef parameter = SourceDef(Opcode::kParameter, InferParameter, EvaluateParameter);
  parameter.syntax = OperandSyntax::kParameterNumber;
  registry.Register(std::move(parameter));

  OpDef constant = SourceDef(Opcode::kConstant, InferConstant, EvaluateConstant);
  constant.syntax = OperandSyntax::kLiteral;
  registry.Register(std::move(constant));

  OpDef iota = SourceDef(Opcode::kIota, InferIota, EvaluateIota);
  iota.attributes = {{"iota_dimension", AttrKind::kInt, /*required=*/true}};
  registry.Register(std::move(iota));

  registry.Register(SourceDef(Opcode::kPartitionId, InferDeviceId, EvaluatePartitionId));
  registry.Register(SourceDef(Opcode::kReplicaId, InferDeviceId, EvaluateReplicaId));
}

}  // namespace sharc::hlo
