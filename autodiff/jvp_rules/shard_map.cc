// shard_map regions and their named-axis collectives: not differentiable yet.
// Their transposes must respect device variance (psum <-> pbroadcast, ...,
// DESIGN.md "shard_map and device variance"), which autodiff does not model.
#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

extern const char* const kShardMapReason;
const char* const kShardMapReason =
    "differentiating shard_map regions needs device-variance-aware rules, which autodiff does "
    "not have; differentiate the program before wrapping it in shard_map";

void RegisterShardMapJvpRules(JvpRuleRegistry& r) {
  for (Opcode op : {Opcode::kShardMap, Opcode::kAxisIndex, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kNamedAllToAll, Opcode::kPBroadcast,
                    Opcode::kPMax, Opcode::kPMin, Opcode::kPPermute, Opcode::kPScatter,
                    Opcode::kPSum, Opcode::kPSumScatter}) {
    r.RegisterUnsupported(op, kShardMapReason);
  }
}

}  // namespace sharc::autodiff
