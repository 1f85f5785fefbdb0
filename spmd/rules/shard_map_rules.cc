// shard_map and its named-axis collectives. spmd/shard_map_lowering.h
// replaces them by manual regions before propagation, so these rules only
// serve tools that look at an unlowered module: shard_map is a manual
// boundary (its operands and results keep the shardings of their specs), and
// the collectives exist only inside bodies, where values are per device.
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

void RegisterShardMapRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kShardMap, [](const Instruction&) -> absl::StatusOr<ShardingRule> {
    ShardingRule rule;
    rule.kind = ShardingRule::Kind::kManualBoundary;
    return rule;
  });
  for (Opcode op : {Opcode::kAxisIndex, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kNamedAllToAll,
                    Opcode::kPBroadcast, Opcode::kPMax, Opcode::kPMin, Opcode::kPPermute,
                    Opcode::kPScatter, Opcode::kPSum, Opcode::kPSumScatter}) {
    registry.Register(op, [](const Instruction&) -> absl::StatusOr<ShardingRule> {
      ShardingRule rule;
      rule.kind = ShardingRule::Kind::kReplicated;
      rule.reason =
          "named-axis collectives act on per-device values inside a shard_map body; lower the "
          "shard_map (spmd::LowerShardMaps) before propagating shardings";
      return rule;
    });
  }
}

}  // namespace sharc::spmd
