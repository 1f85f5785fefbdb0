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
  registry.Register(Opcode::kCustomCall, [](const Instruction& inst) -> absl::StatusOr<ShardingRule> {
    const std::string& target = inst.attr_string("custom_call_target");
    if (target == hlo::kShardingTarget && inst.shape().is_array()) return PointwiseRule(inst);
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
