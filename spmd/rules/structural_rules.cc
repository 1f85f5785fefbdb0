// Tuples, control flow and custom calls. Their values flow along edges
// (operand -> called parameter, body root -> while result, ...) rather than
// through factors; propagation handles those edges itself.
#include "spmd/sharding_rule.h"

#include "absl/strings/str_cat.h"
#include "hlo/ops/custom_call_targets.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

void RegisterStructuralRules(ShardingRuleRegistry& registry) {
  for (Opcode op : {Opcode::kTuple, Opcode::kGetTupleElement, Opcode::kCall, Opcode::kWhile,
                    Opcode::kConditional}) {
    registry.Register(op, [](const Instruction&) -> absl::StatusOr<ShardingRule> {
      ShardingRule rule;
      rule.kind = ShardingRule::Kind::kDataFlow;
      return rule;
    });
  }
  // Ops lower_for_compute.h rewrites before propagation, and the ops that
  // order or transfer whole values: replicated is always right for them.
  auto replicated = [](std::string reason) {
    return [reason](const Instruction&) -> absl::StatusOr<ShardingRule> {
      ShardingRule rule;
      rule.kind = ShardingRule::Kind::kReplicated;
      rule.reason = reason;
      return rule;
    };
  };
  // add-dependency: its value passes through (the token has no dims).
  registry.Register(Opcode::kAddDependency,
                    [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
                      return PointwiseRule(inst);
                    });
  for (Opcode op : {Opcode::kFusion, Opcode::kOptimizationBarrier}) {
    registry.Register(op, replicated(absl::StrCat(hlo::OpcodeName(op),
                                                  " is rewritten before propagation "
                                                  "(hlo/passes/lower_for_compute.h)")));
  }
  for (Opcode op : {Opcode::kDomain, Opcode::kBitcast, Opcode::kAllGatherDone, Opcode::kAllGatherStart, Opcode::kAllReduceDone, Opcode::kAllReduceStart, Opcode::kAsyncDone, Opcode::kAsyncStart, Opcode::kAsyncUpdate, Opcode::kCollectivePermuteDone, Opcode::kCollectivePermuteStart, Opcode::kCopyDone, Opcode::kCopyStart}) {
    registry.Register(op, replicated(absl::StrCat(hlo::OpcodeName(op),
                                                  " is rewritten before propagation "
                                                  "(hlo/passes/lower_for_compute.h)")));
  }
  for (Opcode op : {Opcode::kBatchNormGrad, Opcode::kBatchNormInference,
                    Opcode::kBatchNormTraining}) {
    registry.Register(op, replicated(absl::StrCat(hlo::OpcodeName(op),
                                                  " is expanded into primitive ops before "
                                                  "propagation (hlo/passes/expand_batch_norm.h)")));
  }
  registry.Register(Opcode::kAfterAll, replicated("a token has no dimensions to split"));
  registry.Register(Opcode::kGetDimensionSize, replicated("its result is a scalar"));
  registry.Register(Opcode::kSetDimensionSize,
                    replicated("dynamic sizes are not partitioned (sharc keeps dynamic dims at "
                               "their bound)"));
  // map applies its computation at each index: pointwise.
  registry.Register(Opcode::kMap, [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
    return PointwiseRule(inst);
  });
  // sharc's rng draws the whole value on every device from one seed, so
  // that the shards agree with the global program.
  registry.Register(Opcode::kRng, replicated("rng draws the whole value on every device"));
  for (Opcode op : {Opcode::kRngBitGenerator, Opcode::kRngGetAndUpdateState}) {
    registry.Register(op, replicated(absl::StrCat(hlo::OpcodeName(op),
                                                  " advances one random state")));
  }
  for (Opcode op : {Opcode::kSend, Opcode::kSendDone, Opcode::kRecv, Opcode::kRecvDone,
                    Opcode::kInfeed, Opcode::kOutfeed}) {
    registry.Register(op, replicated(absl::StrCat(hlo::OpcodeName(op),
                                                  " transfers whole values to another program "
                                                  "or the host")));
  }
  registry.Register(Opcode::kCustomCall, [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
    const std::string& target = inst.attr_string("custom_call_target");
    // A memory-space annotation keeps its operand's value: element for element.
    if ((target == hlo::kShardingTarget || hlo::IsMemorySpaceAnnotation(target)) &&
        inst.shape().is_array()) {
      return PointwiseRule(inst);
    }
    ShardingRule rule;
    if (hlo::IsManualRegionMarker(target)) {
      rule.kind = ShardingRule::Kind::kManualBoundary;
      return rule;
    }
    rule.kind = ShardingRule::Kind::kReplicated;
    rule.reason = absl::StrCat("custom-call target \"", target, "\" has no sharding rule");
    return rule;
  });
}

}  // namespace sharc::spmd
