#include "hlo/passes/lower_for_compute.h"

#include <algorithm>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/passes/expand_batch_norm.h"
#include "hlo/passes/import_shardy.h"
#include "hlo/passes/inline_map.h"
#include "hlo/passes/upcast_narrow_types.h"

namespace sharc::hlo {
namespace {

// Puts `replacement` where `old` is, keeping what describes the value
// (sharding unless the replacement has its own, metadata, where it came
// from), and removes `old`.
absl::StatusOr<Instruction*> Replace(Computation& computation, Instruction* old,
                                     std::unique_ptr<Instruction> replacement) {
  if (old->sharding() && !replacement->sharding()) replacement->set_sharding(*old->sharding());
  replacement->mutable_metadata() = old->metadata();
  replacement->set_location(old->location());
  Instruction* added = computation.AddInstructionBefore(std::move(replacement), old);
  old->ReplaceAllUsesWith(added);
  RETURN_IF_ERROR(computation.RemoveInstruction(old));
  return added;
}

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

absl::Status SplitCombinedPermute(Computation& computation, Instruction* inst);

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
  RETURN_IF_ERROR(computation.RemoveInstruction(start));
  if (sync == Opcode::kCollectivePermute) return SplitCombinedPermute(computation, added);
  return absl::OkStatus();
}

// A bitcast of one element type is a row-major reshape (the parser refuses
// layouts that would make it anything else).
absl::Status BitcastToReshape(Computation& computation, Instruction* bitcast) {
  if (bitcast->operand(0)->shape().type() != bitcast->shape().type()) return absl::OkStatus();
  return Replace(computation, bitcast,
                 Instruction::Create(Opcode::kReshape, bitcast->name(), bitcast->shape(),
                                     bitcast->operands()))
      .status();
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
  return Replace(computation, call, std::move(topk)).status();
}

// dynamic-slice / dynamic-update-slice with their start indices as one
// vector (XLA's older form) read scalars, one slice of the vector each:
//   dynamic-slice(x, s32[2] %v)  ->  dynamic-slice(x, reshape(slice(v, [0:1])),
//                                                     reshape(slice(v, [1:2])))
absl::Status SplitStartIndexVector(Computation& computation, Instruction* inst) {
  const int64_t first = inst->opcode() == Opcode::kDynamicSlice ? 1 : 2;
  const int64_t rank = inst->operand(0)->shape().rank();
  if (inst->operand_count() != first + 1 || rank == 1) return absl::OkStatus();
  Instruction* vector = inst->operand(first);
  const Shape& vector_shape = vector->shape();
  if (!vector_shape.is_array() || vector_shape.rank() != 1) return absl::OkStatus();
  std::vector<Instruction*> operands(inst->operands().begin(), inst->operands().begin() + first);
  for (int64_t i = 0; i < rank; ++i) {
    std::unique_ptr<Instruction> slice =
        Instruction::Create(Opcode::kSlice, absl::StrCat(inst->name(), ".start", i, ".slice"),
                            Shape(vector_shape.type(), {1}), {vector});
    slice->set_attr("slice", IntListList{{i, i + 1, 1}});
    Instruction* sliced = computation.AddInstructionBefore(std::move(slice), inst);
    std::unique_ptr<Instruction> scalar =
        Instruction::Create(Opcode::kReshape, absl::StrCat(inst->name(), ".start", i),
                            Shape::Scalar(vector_shape.type()), {sliced});
    operands.push_back(computation.AddInstructionBefore(std::move(scalar), inst));
  }
  std::unique_ptr<Instruction> split =
      Instruction::Create(inst->opcode(), inst->name(), inst->shape(), operands);
  for (const Attribute& attr : inst->attributes()) split->set_attr(attr.name, attr.value);
  return Replace(computation, inst, std::move(split)).status();
}

// A collective-permute of several operands (XLA's combined form) is one
// collective-permute per operand and a tuple of their results.
absl::Status SplitCombinedPermute(Computation& computation, Instruction* inst) {
  if (inst->operand_count() < 2 || inst->has_attr("slice_sizes")) return absl::OkStatus();
  std::vector<Instruction*> parts;
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    std::unique_ptr<Instruction> part =
        Instruction::Create(Opcode::kCollectivePermute, absl::StrCat(inst->name(), ".", i),
                            inst->operand(i)->shape(), {inst->operand(i)});
    for (const Attribute& attr : inst->attributes()) part->set_attr(attr.name, attr.value);
    if (inst->sharding() && inst->sharding()->IsTuple() &&
        inst->sharding()->tuple_elements().size() == static_cast<size_t>(inst->operand_count())) {
      part->set_sharding(inst->sharding()->tuple_elements()[static_cast<size_t>(i)]);
    }
    part->set_location(inst->location());
    parts.push_back(computation.AddInstructionBefore(std::move(part), inst));
  }
  return Replace(computation, inst,
                 Instruction::Create(Opcode::kTuple, inst->name(), inst->shape(), parts))
      .status();
}

// `value` with each array leaf behind a "Sharding" annotation of its leaf
// sharding (leaves[next...]); a tuple is taken apart and put together again,
// so that every annotation is an array (as kernels and the partitioner's
// copies need).
Instruction* AnnotateLeaves(Computation& computation, Instruction* value,
                            const std::vector<Sharding>& leaves, size_t& next,
                            Instruction* before) {
  const Shape& shape = value->shape();
  if (!shape.is_tuple()) {
    std::unique_ptr<Instruction> annotation = Instruction::Create(
        Opcode::kCustomCall, absl::StrCat(value->name(), ".sharding"), shape, {value});
    annotation->set_attr("custom_call_target", std::string(kShardingTarget));
    annotation->set_sharding(leaves[next++]);
    annotation->set_location(before->location());
    return computation.AddInstructionBefore(std::move(annotation), before);
  }
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    std::unique_ptr<Instruction> element =
        Instruction::Create(Opcode::kGetTupleElement, absl::StrCat(value->name(), ".", i),
                            shape.tuple_shape(i), {value});
    element->set_attr("index", i);
    Instruction* added = computation.AddInstructionBefore(std::move(element), before);
    elements.push_back(AnnotateLeaves(computation, added, leaves, next, before));
  }
  return computation.AddInstructionBefore(
      Instruction::Create(Opcode::kTuple, absl::StrCat(value->name(), ".annotated"), shape,
                          elements),
      before);
}

// XLA writes an outfeed's sharding for what it sends (its data, or the
// tuple (data, token)); the outfeed's own value is a token. The sharding
// moves onto "Sharding" annotations of the data's leaves, where propagation
// reads it.
absl::Status MoveOutfeedShardingToData(Computation& computation, Instruction* outfeed) {
  if (!outfeed->sharding() || outfeed->sharding()->Validate(outfeed->shape(), 0).ok()) {
    return absl::OkStatus();
  }
  const Sharding& written = *outfeed->sharding();
  Instruction* data = outfeed->operand(0);
  std::vector<Sharding> leaves;
  if (written.Validate(data->shape(), 0).ok()) {
    leaves = written.IsTuple() ? written.tuple_elements() : std::vector<Sharding>{written};
  } else if (written.IsTuple() &&
             written.Validate(Shape::Tuple({data->shape(), outfeed->shape()}), 0).ok()) {
    leaves = written.tuple_elements();
    leaves.pop_back();  // the token's
  } else {
    return absl::OkStatus();  // the verifier has said what is wrong
  }
  if (static_cast<int64_t>(leaves.size()) != data->shape().leaf_count()) return absl::OkStatus();
  size_t next = 0;
  outfeed->ReplaceOperand(0, AnnotateLeaves(computation, data, leaves, next, outfeed));
  // An outfeed of manual values is an op of the manual region: each device
  // sends its own (XLA's manual outfeed); its token stays manual too.
  const bool manual = std::all_of(leaves.begin(), leaves.end(),
                                  [](const Sharding& leaf) { return leaf.IsManual(); });
  if (manual && !leaves.empty()) {
    outfeed->set_sharding(Sharding::Manual());
  } else {
    outfeed->clear_sharding();
  }
  return absl::OkStatus();
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

// A convolution's pred operand becomes 0/1 of the result type.
void ConvertPredOperands(Computation& computation, Instruction* conv) {
  for (int64_t k = 0; k < conv->operand_count(); ++k) {
    Instruction* operand = conv->operand(k);
    if (operand->shape().type() != PrimitiveType::kPred || !conv->shape().is_array()) continue;
    Instruction* converted = computation.AddInstructionBefore(
        Instruction::Create(Opcode::kConvert, absl::StrCat(conv->name(), ".operand", k),
                            Shape(conv->shape().type(), operand->shape().dims()), {operand}),
        conv);
    conv->ReplaceOperand(k, converted);
  }
}

}  // namespace

absl::Status LowerForCompute(Module& module) {
  RETURN_IF_ERROR(ImportShardyRoundTrip(module).status());
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
        case Opcode::kDynamicSlice:
        case Opcode::kDynamicUpdateSlice:
          RETURN_IF_ERROR(SplitStartIndexVector(*computation, inst));
          break;
        case Opcode::kCollectivePermute:
          RETURN_IF_ERROR(SplitCombinedPermute(*computation, inst));
          break;
        case Opcode::kCustomCall:
          if (inst->attr_string("custom_call_target") == "TopK") {
            RETURN_IF_ERROR(TopKCustomCallToTopK(*computation, inst));
          }
          break;
        case Opcode::kMap:
          RETURN_IF_ERROR(InlineElementwiseMap(*computation, inst).status());
          break;
        case Opcode::kConvolution:
          ConvertPredOperands(*computation, inst);
          break;
        case Opcode::kOutfeed:
          RETURN_IF_ERROR(MoveOutfeedShardingToData(*computation, inst));
          break;
        case Opcode::kAddDependency:
          // One that orders a value after a transfer (an outfeed's token)
          // stays: it keeps the transfer in the program, before the value.
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
  return UpcastNarrowTypes(module);
}

}  // namespace sharc::hlo
