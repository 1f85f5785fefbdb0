#include "hlo/verifier/runnable_types.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/ops/complex_semantics.h"
#include "hlo/ops/narrow_type_semantics.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {

PrimitiveType FirstUnrunnableType(const Shape& shape, bool allow_tokens) {
  if (shape.is_tuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      PrimitiveType type = FirstUnrunnableType(element, allow_tokens);
      if (type != PrimitiveType::kInvalid) return type;
    }
    return PrimitiveType::kInvalid;
  }
  if (allow_tokens && shape.type() == PrimitiveType::kToken) return PrimitiveType::kInvalid;
  // Complex values run in the ops CheckComplexSupported accepts, narrow ones
  // in those CheckNarrowTypeSupported accepts.
  return shape.is_array() && !IsRunnableType(shape.type()) && !IsComplex(shape.type()) &&
                 !IsNarrowType(shape.type())
             ? shape.type()
             : PrimitiveType::kInvalid;
}

namespace {

// Tokens compute as empty values (hlo/ops/token_ops.cc).
absl::Status CheckTypes(const Module& module) {
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      if (inst->shape().has_dynamic_dims()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "value '%", inst->name(), "' has a bounded dynamic shape ", inst->shape().ToString(),
            ", which sharc reads and verifies but cannot compute with (it runs static shapes "
            "only), in ", inst->Describe()));
      }
      PrimitiveType type = FirstUnrunnableType(inst->shape(), /*allow_tokens=*/true);
      if (type == PrimitiveType::kInvalid) {
        RETURN_IF_ERROR(CheckComplexSupported(*inst));
        RETURN_IF_ERROR(CheckNarrowTypeSupported(*inst));
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "value '%", inst->name(), "' has element type ", PrimitiveTypeName(type),
          ", which sharc reads and verifies but cannot compute with, in ", inst->Describe()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckRunnableTypes(const Module& module) {
  // An op that cannot run says why first: it is the reason, while the
  // token it returns is only a symptom.
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      const std::string& reason = GetOpDef(inst->opcode()).cannot_run;
      if (reason.empty()) continue;
      return absl::UnimplementedError(absl::StrCat(
          "'%", inst->name(), "' (", OpcodeName(inst->opcode()), ") stops the run: ", reason,
          "; sharc reads, verifies and partitions it, in ", inst->Describe()));
    }
  }
  return CheckTypes(module);
}

absl::Status CheckPartitionableTypes(const Module& module) {
  return CheckTypes(module);
}

}  // namespace sharc::hlo
