#include "hlo/passes/lower_for_compute.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {
namespace {

// A fusion becomes a call of the same computation, keeping everything that
// describes the value (name, shape, sharding, where it came from).
absl::Status FusionToCall(Computation& computation, Instruction* fusion) {
  std::unique_ptr<Instruction> call =
      Instruction::Create(Opcode::kCall, fusion->name(), fusion->shape(), fusion->operands());
  call->set_attr("to_apply", fusion->attr_computation("calls"));
  if (fusion->sharding()) call->set_sharding(*fusion->sharding());
  call->mutable_metadata() = fusion->metadata();
  call->set_frontend_attributes(fusion->frontend_attributes());
  call->set_location(fusion->location());
  Instruction* added = computation.AddInstructionBefore(std::move(call), fusion);
  fusion->ReplaceAllUsesWith(added);
  return computation.RemoveInstruction(fusion);
}

// opt-barrier and add-dependency: uses read the value itself. A sharding
// written on the op moves to its value when that has none; two different
// ones cannot both be kept.
absl::Status ForwardValue(Computation& computation, Instruction* inst) {
  Instruction* value = inst->operand(0);
  if (inst->sharding()) {
    if (!value->sharding()) {
      value->set_sharding(*inst->sharding());
    } else if (*value->sharding() != *inst->sharding()) {
      return absl::UnimplementedError(absl::StrCat(
          OpcodeName(inst->opcode()), " with a sharding (", inst->sharding()->ToString(),
          ") other than its operand's (", value->sharding()->ToString(),
          ") cannot be computed with; drop one of them, in ", inst->Describe()));
    }
  }
  inst->ReplaceAllUsesWith(value);
  return computation.RemoveInstruction(inst);
}

// A token made by after-all from values and from tokens that order
// nothing themselves orders nothing (values have no side effects).
bool OrdersNothing(const Instruction* token) {
  if (token->opcode() != Opcode::kAfterAll) return false;
  for (const Instruction* op : token->operands()) {
    const bool is_token = op->shape().is_array() && op->shape().type() == PrimitiveType::kToken;
    if (is_token && !OrdersNothing(op)) return false;
    if (op->shape().is_tuple()) return false;  // it may hold a transfer's token
  }
  return true;
}

}  // namespace

absl::Status LowerForCompute(Module& module) {
  for (Computation* computation : module.computations()) {
    for (Instruction* inst : computation->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kFusion:
          RETURN_IF_ERROR(FusionToCall(*computation, inst));
          break;
        case Opcode::kOptimizationBarrier:
          RETURN_IF_ERROR(ForwardValue(*computation, inst));
          break;
        case Opcode::kAddDependency:
          // One that orders a value after a transfer (an outfeed's token)
          // stays: it keeps the transfer in the program, which then cannot
          // run and says so, but partitions with it.
          if (OrdersNothing(inst->operand(1))) RETURN_IF_ERROR(ForwardValue(*computation, inst));
          break;
        default:
          break;
      }
    }
    // after-all with no users orders nothing now (users first: a chain of
    // them goes in one sweep from the end).
    std::vector<Instruction*> instructions = computation->instructions();
    for (auto it = instructions.rbegin(); it != instructions.rend(); ++it) {
      Instruction* inst = *it;
      if (inst->opcode() == Opcode::kAfterAll && inst->users().empty() &&
          inst != computation->root()) {
        RETURN_IF_ERROR(computation->RemoveInstruction(inst));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo
