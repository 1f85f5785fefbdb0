// shard_map and its named-axis collectives have no transpose rules yet (see
// jvp_rules/shard_map.cc for why).
#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

extern const char* const kShardMapReason;

void RegisterShardMapTransposeRules(TransposeRuleRegistry& r) {
  for (Opcode op : {Opcode::kShardMap, Opcode::kAxisIndex, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kNamedAllToAll, Opcode::kPBroadcast,
                    Opcode::kPMax, Opcode::kPMin, Opcode::kPPermute, Opcode::kPScatter,
                    Opcode::kPSum, Opcode::kPSumScatter}) {
    r.RegisterUnsupported(op, kShardMapReason);
  }
}

}  // namespace sharc::autodiff
