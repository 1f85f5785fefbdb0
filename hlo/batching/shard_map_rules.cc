// vmap of shard_map regions and their named-axis collectives. The vmapped
// dimension is one more array dimension that no mesh axis splits: every
// operand of the region enters batched with a leading unsplit dim (P(None,
// ...)), the body is batched the same way, and each collective, which acts
// element by element across devices (or along a named dimension, which
// shifts by one), is the same collective on the batched value. This is how
// a shard_map inside a MapReduce map_fn (lowered to a vmapped call) runs.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::hlo {
namespace {

// `inst` on its batched operands (all materialised), its result batched at
// dim 0, with `attributes` replacing its own of the same names.
BatchedValue RebuildBatched(const Instruction& inst, std::vector<Instruction*> operands,
                            std::vector<Attribute> attributes, BatchingContext& ctx) {
  auto batched = CloneWithOperands(inst, std::move(operands));
  BatchTree tree = BatchTree::Uniform(inst.shape(), true);
  batched->set_shape(tree.Apply(inst.shape(), ctx.batch_size()));
  batched->clear_sharding();
  for (Attribute& a : attributes) batched->set_attr(std::move(a.name), std::move(a.value));
  return BatchedValue{ctx.emitter().Add(std::move(batched)), std::move(tree)};
}

absl::StatusOr<BatchedValue> BatchShardMap(const Instruction& inst,
                                           absl::Span<const BatchedValue> operands,
                                           BatchingContext& ctx) {
  // Unbatched operands are broadcast, so that one body serves every slice.
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched_operands,
                   MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
  ASSIGN_OR_RETURN(std::vector<AxisSpec> in_specs, ShardMapSpecs(inst, "in_specs"));
  ASSIGN_OR_RETURN(std::vector<AxisSpec> out_specs, ShardMapSpecs(inst, "out_specs"));
  for (AxisSpec& spec : in_specs) spec.insert(spec.begin(), std::vector<std::string>{});
  for (AxisSpec& spec : out_specs) spec.insert(spec.begin(), std::vector<std::string>{});
  const Computation& body = *inst.attr_computation("to_apply");
  std::vector<BatchTree> params;
  for (const Instruction* p : body.parameters()) {
    params.push_back(BatchTree::Uniform(p->shape(), true));
  }
  const BatchTree result = BatchTree::Uniform(body.root()->shape(), true);
  ASSIGN_OR_RETURN(BatchedComputation batched_body,
                   ctx.BatchCallee(body, std::move(params), &result));
  return RebuildBatched(inst, std::move(batched_operands),
                        {{"in_specs", PrintSpecsText(in_specs)},
                         {"out_specs", PrintSpecsText(out_specs)},
                         {"to_apply", batched_body.computation}},
                        ctx);
}

// psum, pmax, pmin, pbroadcast, ppermute: element by element across devices.
absl::StatusOr<BatchedValue> BatchElementwiseCollective(const Instruction& inst,
                                                        absl::Span<const BatchedValue> operands,
                                                        BatchingContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched_operands,
                   MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
  return RebuildBatched(inst, std::move(batched_operands), {}, ctx);
}

// The collectives that gather, scatter or exchange along named dimensions:
// those dimensions move one place right.
BatchFn ShiftingDimensions(std::vector<std::string> dimension_attrs) {
  return [dimension_attrs](const Instruction& inst, absl::Span<const BatchedValue> operands,
                           BatchingContext& ctx) -> absl::StatusOr<BatchedValue> {
    ASSIGN_OR_RETURN(std::vector<Instruction*> batched_operands,
                     MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
    std::vector<Attribute> shifted;
    for (const std::string& name : dimension_attrs) {
      shifted.push_back({name, inst.attr_int(name) + 1});
    }
    return RebuildBatched(inst, std::move(batched_operands), std::move(shifted), ctx);
  };
}

}  // namespace

void RegisterShardMapBatchingRules(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kShardMap, BatchShardMap);
  for (Opcode op : {Opcode::kPSum, Opcode::kPMax, Opcode::kPMin, Opcode::kPBroadcast,
                    Opcode::kPPermute}) {
    registry.Register(op, BatchElementwiseCollective);
  }
  for (Opcode op : {Opcode::kNamedAllGather, Opcode::kNamedAllGatherInvariant,
                    Opcode::kPSumScatter, Opcode::kPScatter}) {
    registry.Register(op, ShiftingDimensions({"dimension"}));
  }
  registry.Register(Opcode::kNamedAllToAll,
                    ShiftingDimensions({"split_dimension", "concat_dimension"}));
  // axis_index takes no operands, so no slice ever differs: the driver copies
  // it, and this rule only records that it has one.
  registry.Register(Opcode::kAxisIndex,
                    [](const Instruction& inst, absl::Span<const BatchedValue>,
                       BatchingContext& ctx) -> absl::StatusOr<BatchedValue> {
                      Instruction* copy = ctx.emitter().Add(CloneWithOperands(inst, {}));
                      return BatchedValue{copy, BatchTree::Uniform(inst.shape(), false)};
                    });
}

}  // namespace sharc::hlo
