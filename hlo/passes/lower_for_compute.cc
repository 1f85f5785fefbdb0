#include "hlo/passes/lower_for_compute.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/passes/expand_batch_norm.h"

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

// The synchronous op an async pair stands for, and the start's attribute
// that becomes another name on it (async-start's calls= is call's to_apply=).
struct SyncForm {
  Opcode start, sync;
};
constexpr SyncForm kSyncForms[] = {
    {Opcode::kAllReduceStart, Opcode::kAllReduce},
    {Opcode::kAllGatherStart, Opcode::kAllGather},
    {Opcode::kCollectivePermuteStart, Opcode::kCollectivePermute},
    {Opcode::kCopyStart, Opcode::kCopy},
    {Opcode::kAsyncStart, Opcode::kCall},
};

bool IsDone(Opcode op) {
  return op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone ||
         op == Opcode::kCollectivePermuteDone || op == Opcode::kCopyDone ||
         op == Opcode::kAsyncDone;
}

// A done and its start (through any async-updates) become the synchronous
// op over the start's operands, with the done's name, shape and sharding.
// A start read by anything but its updates and done (its operands held in
// the tuple) stays as written: it still evaluates, on the interpreter.
absl::Status PairToSync(Computation& computation, Instruction* done) {
  std::vector<Instruction*> chain;  // the updates, done first
  Instruction* start = done->operand(0);
  while (start->opcode() == Opcode::kAsyncUpdate) {
    chain.push_back(start);
    start = start->operand(0);
  }
  Instruction* user_ok = chain.empty() ? done : chain.back();
  if (start->users().size() != 1 || start->users()[0] != user_ok) return absl::OkStatus();
  for (size_t i = 0; i < chain.size(); ++i) {
    const Instruction* reader = i == 0 ? done : chain[i - 1];
    if (chain[i]->users().size() != 1 || chain[i]->users()[0] != reader) {
      return absl::OkStatus();
    }
  }
  Opcode sync = Opcode::kCall;
  for (const SyncForm& form : kSyncForms) {
    if (form.start == start->opcode()) sync = form.sync;
  }
  std::unique_ptr<Instruction> op =
      Instruction::Create(sync, done->name(), done->shape(), start->operands());
  for (const Attribute& attr : start->attributes()) {
    if (attr.name == "calls") {
      op->set_attr("to_apply", attr.value);
    } else if (attr.name != "async_execution_thread" &&
               attr.name != "cross_program_prefetch_index") {
      op->set_attr(attr.name, attr.value);
    }
  }
  if (done->sharding()) op->set_sharding(*done->sharding());
  op->mutable_metadata() = start->metadata();
  op->set_location(start->location());
  Instruction* added = computation.AddInstructionBefore(std::move(op), done);
  done->ReplaceAllUsesWith(added);
  RETURN_IF_ERROR(computation.RemoveInstruction(done));
  for (Instruction* update : chain) RETURN_IF_ERROR(computation.RemoveInstruction(update));
  return computation.RemoveInstruction(start);
}

// A bitcast of one element type is a row-major reshape (the parser refuses
// layouts that would make it anything else).
absl::Status BitcastToReshape(Computation& computation, Instruction* bitcast) {
  if (bitcast->operand(0)->shape().type() != bitcast->shape().type()) return absl::OkStatus();
  std::unique_ptr<Instruction> reshape = Instruction::Create(
      Opcode::kReshape, bitcast->name(), bitcast->shape(), bitcast->operands());
  if (bitcast->sharding()) reshape->set_sharding(*bitcast->sharding());
  reshape->mutable_metadata() = bitcast->metadata();
  reshape->set_location(bitcast->location());
  Instruction* added = computation.AddInstructionBefore(std::move(reshape), bitcast);
  bitcast->ReplaceAllUsesWith(added);
  return computation.RemoveInstruction(bitcast);
}

// XLA's TopK custom call (values, s32 indices) becomes topk with k from the
// result's last dim, when its comparator (called_computations, if any) is
// one compare GT (largest first) or LT (smallest first) of its parameters.
absl::Status TopKCustomCallToTopK(Computation& computation, Instruction* call) {
  const Shape& shape = call->shape();
  if (call->operand_count() != 1 || !shape.is_tuple() || shape.tuple_size() != 2 ||
      !shape.tuple_shape(0).is_array() || shape.tuple_shape(0).rank() < 1) {
    return absl::OkStatus();
  }
  bool largest = true;
  const std::vector<Computation*>& called = call->attr_computations("called_computations");
  if (!called.empty()) {
    const Instruction* root = called[0]->root();
    if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2 ||
        root->operand(0)->opcode() != Opcode::kParameter ||
        root->operand(1)->opcode() != Opcode::kParameter ||
        root->operand(0)->parameter_number() != 0 || root->operand(1)->parameter_number() != 1) {
      return absl::OkStatus();
    }
    const std::string& direction = root->attr_string("direction");
    if (direction != "GT" && direction != "LT") return absl::OkStatus();
    largest = direction == "GT";
  }
  std::unique_ptr<Instruction> topk =
      Instruction::Create(Opcode::kTopK, call->name(), shape, call->operands());
  topk->set_attr("k", shape.tuple_shape(0).dims().back());
  topk->set_attr("largest", largest);
  if (call->sharding()) topk->set_sharding(*call->sharding());
  topk->mutable_metadata() = call->metadata();
  topk->set_location(call->location());
  Instruction* added = computation.AddInstructionBefore(std::move(topk), call);
  call->ReplaceAllUsesWith(added);
  return computation.RemoveInstruction(call);
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
  RETURN_IF_ERROR(ExpandBatchNorm(module));
  for (Computation* computation : module.computations()) {
    for (Instruction* inst : computation->instructions()) {
      switch (inst->opcode()) {
        case Opcode::kFusion:
          RETURN_IF_ERROR(FusionToCall(*computation, inst));
          break;
        case Opcode::kOptimizationBarrier:
        case Opcode::kDomain:
          RETURN_IF_ERROR(ForwardValue(*computation, inst));
          break;
        case Opcode::kBitcast:
          RETURN_IF_ERROR(BitcastToReshape(*computation, inst));
          break;
        case Opcode::kCustomCall:
          if (inst->attr_string("custom_call_target") == "TopK") {
            RETURN_IF_ERROR(TopKCustomCallToTopK(*computation, inst));
          }
          break;
        case Opcode::kAddDependency:
          // One that orders a value after a transfer (an outfeed's token)
          // stays: it keeps the transfer in the program, which then cannot
          // run and says so, but partitions with it.
          if (OrdersNothing(inst->operand(1))) RETURN_IF_ERROR(ForwardValue(*computation, inst));
          break;
        default:
          if (IsDone(inst->opcode())) RETURN_IF_ERROR(PairToSync(*computation, inst));
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
