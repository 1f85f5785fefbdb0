// The MapReduce blocks describe the partitioned structure that vmap itself
// is used to lower (mapreduce.map becomes a vmapped call), so they are
// expected to be gone before vmap runs.
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {

void RegisterMapReduceBatchingRules(BatchingRuleRegistry& registry) {
  for (Opcode op : {Opcode::kMapReduceBroadcast, Opcode::kMapReduceMap, Opcode::kMapReduceMean,
                    Opcode::kMapReduceSum}) {
    registry.RegisterUnsupported(op, "lower MapReduce blocks before vmap");
  }
}

}  // namespace sharc::hlo
