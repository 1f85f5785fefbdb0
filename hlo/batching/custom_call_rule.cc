// custom-call: the sharding annotation and propagation barriers are
// identities, and the shard_map markers SPMDFullToShardShape /
// SPMDShardToFullShape keep every dim but the ones their sharding splits, so
// all of them take the batch dim as a new leading dim (the driver gives the
// instruction's sharding its leading dim via VmapOptions::batch_sharding).
// Other targets are opaque to vmap.
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_sharding.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ops/identity_custom_calls.h"

namespace sharc::hlo {
namespace {

bool IsShapePreservingTarget(const std::string& target) {
  return IsShardingAnnotationTarget(target);
}

absl::StatusOr<BatchedValue> BatchCustomCall(const Instruction& inst,
                                             absl::Span<const BatchedValue> operands,
                                             BatchingContext& ctx) {
  const std::string& target = inst.attr_string("custom_call_target");
  const bool manual_marker = IsManualRegionMarker(target);
  if (!IsShapePreservingTarget(target) && !manual_marker) {
    return CannotBatch(inst, absl::StrCat("custom-call target \"", target,
                                          "\" is opaque to vmap (only Sharding, "
                                          "ShardBarrierFrom/To and the SPMD shard markers are "
                                          "batched)"));
  }
  if (inst.operand_count() != 1 || !inst.shape().is_array()) {
    return CannotBatch(inst, "it must take one array operand");
  }
  auto call = CloneWithOperands(inst, {operands[0].inst});
  call->set_shape(BatchedShape(inst.shape(), ctx.batch_size()));
  call->clear_sharding();
  if (manual_marker) {
    // The full value's sharding: on the operand entering the region, on the
    // marker itself leaving it. Were the batch dim split across devices, the
    // per-device values inside the region would need their own batch size.
    std::optional<Sharding> full = operands[0].inst->sharding();
    if (target == kShardToFullShapeTarget && inst.sharding().has_value()) {
      ASSIGN_OR_RETURN(full, BatchSharding(*inst.sharding(), inst.shape(), BatchTree::Leaf(true),
                                           ctx.batch_size(), ctx.options()));
    }
    if (full.has_value() && full->IsTiled() && full->TileCount(0) != 1) {
      return CannotBatch(inst,
                         "the batch dimension would be split across devices at a manual "
                         "region boundary; shard it outside shard_map regions only");
    }
  }
  return BatchedValue{ctx.emitter().Add(std::move(call)), BatchTree::Leaf(true)};
}

}  // namespace

void RegisterCustomCallBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kCustomCall, BatchCustomCall);
}

}  // namespace sharc::hlo
