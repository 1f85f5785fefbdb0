// Collectives communicate between devices, and each slice of a vmap would
// have to take part in its own collective: there is no single-program form of
// that, so vmap refuses them (shard_map regions are where they belong).
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
  // JAX batches shard_map through spmd_axis_name; sharc has no such vmap
  // mode yet, so the region and its named-axis collectives are refused.
  registry.RegisterUnsupported(Opcode::kShardMap,
                               "vmap of a shard_map is not supported; vmap the body's function "
                               "before building the shard_map, or map over a mesh axis instead");
  const std::string named_reason =
      "named-axis collectives communicate between a shard_map's devices and cannot run once per "
      "vmapped slice; apply vmap inside the shard_map body only to code without collectives";
  for (Opcode op : {Opcode::kAxisIndex, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kNamedAllToAll,
                    Opcode::kPBroadcast, Opcode::kPMax, Opcode::kPMin, Opcode::kPPermute,
                    Opcode::kPScatter, Opcode::kPSum, Opcode::kPSumScatter}) {
    registry.RegisterUnsupported(op, named_reason);
  }
}

}  // namespace sharc::hlo
