// Collectives communicate between devices, and each slice of a vmap would
// have to take part in its own collective: there is no single-program form of
// that, so vmap refuses them (shard_map regions are where they belong; their
// named-axis collectives batch, see shard_map_rules.cc).
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {

void RegisterCollectiveBatchingRules(BatchingRuleRegistry& registry) {
  const std::string reason =
      "collectives communicate between devices and cannot run once per vmapped slice; move "
      "the collective out of the vmapped function or use shard_map";
  for (Opcode op : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kAllToAll,
                    Opcode::kCollectivePermute, Opcode::kReduceScatter}) {
    registry.RegisterUnsupported(op, reason);
  }
}

}  // namespace sharc::hlo
