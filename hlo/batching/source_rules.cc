// Sources: constants, iota, partition-id and replica-id are the same for
// every slice (they have no operands, so the driver copies them unbatched);
// a parameter is batched as the vmap call (or the caller's operand) says.
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

// Never reached through the driver, which copies operand-less instructions;
// kept so that a direct call still gives the right (unbatched) answer.
absl::StatusOr<BatchedValue> BatchUnbatchedSource(const Instruction& inst,
                                                  absl::Span<const BatchedValue>,
                                                  BatchingContext& ctx) {
  Instruction* copy = ctx.emitter().Add(CloneWithOperands(inst, {}));
  return BatchedValue{copy, BatchTree::Uniform(inst.shape(), false)};
}

absl::StatusOr<BatchedValue> BatchParameter(const Instruction& inst, absl::Span<const BatchedValue>,
                                            BatchingContext& ctx) {
  return ctx.Parameter(inst.parameter_number());
}

}  // namespace

void RegisterSourceBatchingRules(BatchingRuleRegistry& registry) {
  for (Opcode op : {Opcode::kConstant, Opcode::kIota, Opcode::kPartitionId, Opcode::kReplicaId}) {
    registry.Register(op, BatchUnbatchedSource);
  }
  registry.RegisterAlways(Opcode::kParameter, BatchParameter);
}

}  // namespace sharc::hlo
