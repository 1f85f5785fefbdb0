// The batching rule table, assembled from the family files.
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {

void BatchingRuleRegistry::Register(Opcode opcode, BatchFn batch) {
  auto rule = std::make_unique<BatchingRule>();
  rule->batch = std::move(batch);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

void BatchingRuleRegistry::RegisterAlways(Opcode opcode, BatchFn batch) {
  Register(opcode, std::move(batch));
  rules_[static_cast<size_t>(opcode)]->apply_to_unbatched = true;
}

void BatchingRuleRegistry::RegisterUnsupported(Opcode opcode, std::string reason) {
  auto rule = std::make_unique<BatchingRule>();
  rule->unsupported_reason = std::move(reason);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

const BatchingRule* BatchingRuleRegistry::Find(Opcode opcode) const {
  return rules_[static_cast<size_t>(opcode)].get();
}

const BatchingRule* FindBatchingRule(Opcode opcode) {
  static const BatchingRuleRegistry* registry = [] {
    auto* r = new BatchingRuleRegistry();
    RegisterSourceBatchingRules(*r);
    RegisterElementwiseBatchingRules(*r);
    RegisterShapeBatchingRules(*r);
    RegisterDynamicSliceBatchingRules(*r);
    RegisterGatherScatterBatchingRules(*r);
    RegisterReductionBatchingRules(*r);
    RegisterDotBatchingRule(*r);
    RegisterConvolutionBatchingRule(*r);
    RegisterSortBatchingRule(*r);
    RegisterTokenBatchingRules(*r);
    RegisterControlFlowBatchingRules(*r);
    RegisterWhileBatchingRule(*r);
    RegisterConditionalBatchingRule(*r);
    RegisterCustomCallBatchingRule(*r);
    RegisterCollectiveBatchingRules(*r);
    RegisterShardMapBatchingRules(*r);
    RegisterMapReduceBatchingRules(*r);
    return r;
  }();
  return registry->Find(opcode);
}

}  // namespace sharc::hlo
