// Tokens, scheduling-only ops and transfers under vmap. opt-barrier and
// add-dependency keep their value's batching; a token carries no value, so
// there is nothing to batch in after-all, and the transfers cannot run.
// fusion is a call by the time anything is batched (lower_for_compute.h).
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// The op again over its batched value (operand 0), with the batched shape.
absl::StatusOr<BatchedValue> BatchPassThrough(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  std::vector<Instruction*> args;
  for (const BatchedValue& v : operands) args.push_back(v.inst);
  auto op = CloneWithOperands(inst, std::move(args));
  op->clear_sharding();
  op->set_shape(operands[0].batched.Apply(inst.operand(0)->shape(), ctx.batch_size()));
  return BatchedValue{ctx.emitter().Add(std::move(op)), operands[0].batched};
}

}  // namespace

void RegisterTokenBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kOptimizationBarrier, BatchPassThrough);
  registry.Register(Opcode::kAddDependency, BatchPassThrough);
  registry.RegisterUnsupported(Opcode::kAfterAll,
                               "after-all joins tokens, which carry no value to batch");
  registry.RegisterUnsupported(Opcode::kFusion,
                               "fusion is rewritten to a call before anything computes "
                               "(hlo/passes/lower_for_compute.h); batch the module after that");
  for (Opcode op : {Opcode::kDomain, Opcode::kBitcast, Opcode::kAllGatherDone, Opcode::kAllGatherStart, Opcode::kAllReduceDone, Opcode::kAllReduceStart, Opcode::kAsyncDone, Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kCollectivePermuteDone, Opcode::kCollectivePermuteStart, Opcode::kCopyDone, Opcode::kCopyStart}) {
    registry.RegisterUnsupported(op, std::string(OpcodeName(op)) +
                                         " is rewritten before anything computes "
                                         "(hlo/passes/lower_for_compute.h); batch the module "
                                         "after that");
  }
  for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                    Opcode::kBatchNormTraining}) {
    registry.RegisterUnsupported(op, std::string(OpcodeName(op)) +
                                         " is expanded into primitive ops before anything "
                                         "computes (hlo/passes/expand_batch_norm.h)");
  }
  registry.RegisterUnsupported(Opcode::kMap,
                               "map whose function is not elementwise has no batching rule yet "
                               "(elementwise ones become array ops on load, "
                               "hlo/passes/inline_map.h)");
  for (Opcode op : {Opcode::kGetDimensionSize,
                    Opcode::kSetDimensionSize, Opcode::kCollectiveBroadcast,
                    Opcode::kRaggedAllToAll}) {
    registry.RegisterUnsupported(op, std::string(OpcodeName(op)) + " has no batching rule yet");
  }
  for (Opcode op : {Opcode::kSend, Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone,
                    Opcode::kInfeed, Opcode::kOutfeed}) {
    registry.RegisterUnsupported(op, std::string(OpcodeName(op)) +
                                         " transfers data to another program or the host, "
                                         "which sharc cannot run");
  }
}

}  // namespace sharc::hlo
