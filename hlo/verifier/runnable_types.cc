#include "hlo/verifier/runnable_types.h"

#include "absl/strings/str_cat.h"

namespace sharc::hlo {

PrimitiveType FirstUnrunnableType(const Shape& shape) {
  if (shape.is_tuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      PrimitiveType type = FirstUnrunnableType(element);
      if (type != PrimitiveType::kInvalid) return type;
    }
    return PrimitiveType::kInvalid;
  }
  return shape.is_array() && !IsRunnableType(shape.type()) ? shape.type()
                                                           : PrimitiveType::kInvalid;
}

absl::Status CheckRunnableTypes(const Module& module) {
  for (const Computation* computation : module.computations()) {
    for (const Instruction* inst : computation->instructions()) {
      if (inst->shape().has_dynamic_dims()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "value '%", inst->name(), "' has a bounded dynamic shape ", inst->shape().ToString(),
            ", which sharc reads and verifies but cannot compute with (it runs static shapes "
            "only), in ", inst->Describe()));
      }
      PrimitiveType type = FirstUnrunnableType(inst->shape());
      if (type == PrimitiveType::kInvalid) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "value '%", inst->name(), "' has element type ", PrimitiveTypeName(type),
          ", which sharc reads and verifies but cannot compute with, in ", inst->Describe()));
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo
