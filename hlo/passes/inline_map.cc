#include "hlo/passes/inline_map.h"

#include "hlo/base/status_macros.h"
#include "hlo/ops/scalar_function.h"

namespace sharc::hlo {

absl::StatusOr<bool> InlineElementwiseMap(Computation& computation, Instruction* map) {
  const Computation* f = map->attr_computation("to_apply");
  if (f == nullptr || f->root() == nullptr || !map->shape().is_array() ||
      !IsScalarFunction(*f->root())) {
    return false;
  }
  Instruction* result = LiftScalarFunction(
      *f->root(), map->shape().dims(),
      [&](int64_t k) { return map->operand(k); },
      [&](std::unique_ptr<Instruction> inst) {
        return computation.AddInstructionBefore(std::move(inst), map);
      },
      map->name(), map->name());
  if (result->opcode() != Opcode::kParameter) {
    if (map->sharding()) result->set_sharding(*map->sharding());
    result->mutable_metadata() = map->metadata();
    result->set_location(map->location());
  }
  map->ReplaceAllUsesWith(result);
  RETURN_IF_ERROR(computation.RemoveInstruction(map));
  return true;
}

}  // namespace sharc::hlo
