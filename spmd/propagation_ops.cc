// How each op propagates shardings, as data: XLA's per-op choices in
// ShardingPropagation (CanPropagateThroughAtAggressiveLevel,
// SupportSpatialPartitioning, InferShardingFromOperands' and
// GetShardingFromUser's cases) stated once per op in the table below, with
// the steps they name defined in propagation_forward.cc and
// propagation_backward.cc.
//
// An op without an entry takes one from what the op tables already say:
// the elementwise trait (hlo/ops/op_def.h) gives the elementwise entry, a
// factor rule (spmd/sharding_rule.h) the generic one, which projects
// shardings through the rule in both directions from aggressiveness 1
// (Shardy's model). So an op added with a factor rule propagates with no
// edit here; only an op whose XLA behaviour differs needs a line.
#include "spmd/propagation_internal.h"

#include "absl/container/flat_hash_map.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_def.h"

namespace sharc::spmd::internal {

using hlo::Instruction;
using hlo::Opcode;

namespace {

//                                      level  users  split  forward                     backward
constexpr OpPropagation kElementwise = {0,     0,     true,  ForwardElementwise,         BackwardSameDims};
// Power and shifts: the result is laid out like the base / shifted value,
// whatever the exponent's or shift's layout (XLA's PickRepresentativeOperand).
constexpr OpPropagation kElementwiseFromOperand0 = {0, 0, true, ForwardElementwiseFromOperand0,
                                                    BackwardSameDims};
constexpr OpPropagation kFactorRule =  {1,     0,     true,  ForwardThroughRule,         BackwardThroughRule};
// What propagation may not split (no rule, or XLA keeps it whole): it takes
// a replicated operand's sharding, and gives its users' to same-shaped operands.
constexpr OpPropagation kWhole =       {1,     0,     false, nullptr,                    BackwardSameDims};
// A "Sharding" custom call constrains its operand's layout: shardings pass
// through it at every level. The manual-region markers pass nothing back.
constexpr OpPropagation kShardingCall = {0,    0,     true,  ForwardOperand0,            BackwardSameDims};
constexpr OpPropagation kManualMarker = {1,    0,     false, nullptr,                    nullptr};
// XLA's propagation barriers (its ShardBarrier{From,To}Partitioner):
// ShardBarrierFrom passes its users' shardings back to its operand and
// nothing forward; ShardBarrierTo passes its operand's forward and offers
// its operand only {replicated}.
constexpr OpPropagation kShardBarrierFrom = {1, 0,    true,  nullptr,                    BackwardSameDims};
constexpr OpPropagation kShardBarrierTo = {1,   0,    true,  ForwardOperand0,            BackwardReplicated};

const absl::flat_hash_map<Opcode, OpPropagation>& Table() {
  static const auto* table = new absl::flat_hash_map<Opcode, OpPropagation>{
      //                              level users split  forward                  backward
      {Opcode::kBroadcast,           {2,    2,    true,  ForwardBroadcast,         BackwardBroadcast}},
      {Opcode::kReshape,             {0,    0,    true,  ForwardReshape,           BackwardReshape}},
      {Opcode::kTranspose,           {0,    0,    true,  ForwardThroughOperand0,   BackwardThroughRule}},
      {Opcode::kDynamicSlice,        {0,    0,    true,  ForwardThroughOperand0,   BackwardDynamicSlice}},
      {Opcode::kDynamicUpdateSlice,  {0,    0,    true,  ForwardDynamicUpdateSlice, BackwardDynamicSlice}},
      {Opcode::kConcatenate,         {0,    0,    true,  ForwardConcatenate,       BackwardConcatenate}},
      {Opcode::kTuple,               {0,    0,    true,  ForwardTuple,             BackwardTuple}},
      {Opcode::kGetTupleElement,     {0,    0,    true,  ForwardGetTupleElement,   BackwardGetTupleElement}},
      {Opcode::kWhile,               {0,    0,    true,  ForwardWhile,             BackwardSameDims}},
      {Opcode::kCall,                {0,    0,    false, nullptr,                  BackwardSameDims}},
      {Opcode::kConditional,         {1,    0,    true,  nullptr,                  BackwardSameDims}},
      {Opcode::kConstant,            {1,    0,    true,  nullptr,                  BackwardSameDims}},
      {Opcode::kIota,                {1,    0,    true,  nullptr,                  BackwardSameDims}},
      {Opcode::kParameter,           {1,    0,    false, ForwardIntoCalledParameter, BackwardSameDims}},
      {Opcode::kDot,                 {1,    0,    true,  ForwardDot,               BackwardDot}},
      {Opcode::kConvolution,         {1,    0,    true,  ForwardDot,               BackwardDot}},
      {Opcode::kReduce,              {1,    0,    true,  ForwardReduce,            BackwardReduce}},
      {Opcode::kReduceWindow,        {1,    0,    true,  ForwardReduceWindow,      BackwardReduceWindow}},
      {Opcode::kSlice,               {1,    0,    true,  ForwardOperand0,          BackwardSameSharding}},
      {Opcode::kPad,                 {1,    0,    true,  ForwardOperand0,          BackwardPad}},
      {Opcode::kReverse,             {1,    0,    true,  ForwardReverse,           BackwardReverse}},
      {Opcode::kGather,              {1,    0,    true,  ForwardGather,            BackwardThroughRule}},
      {Opcode::kScatter,             {1,    0,    true,  ForwardScatter,           BackwardScatter}},
      {Opcode::kAllReduce,           {1,    0,    true,  ForwardRepresentative,    BackwardSameDims}},
      {Opcode::kReduceScatter,       {1,    0,    true,  ForwardRepresentative,    BackwardSameDims}},
      {Opcode::kCollectivePermute,   {1,    0,    true,  ForwardOperand0,          BackwardSameDims}},
      // Factor rules propagation does not follow: values of one device or
      // one step that no caller splits. (The MapReduce ops
      // have no line: lowered before propagation in the pipeline, they take
      // the generic entry when propagated as written.)
      {Opcode::kPower,               kElementwiseFromOperand0},
      {Opcode::kShiftLeft,           kElementwiseFromOperand0},
      {Opcode::kShiftRightArithmetic, kElementwiseFromOperand0},
      {Opcode::kShiftRightLogical,   kElementwiseFromOperand0},
      {Opcode::kSort,                {1,    0,    true,  ForwardSort,              BackwardSort}},
      {Opcode::kBitcastConvert,      kWhole},
      {Opcode::kPartitionId,         kWhole},
      {Opcode::kReplicaId,           kWhole},
      {Opcode::kAddDependency,       kWhole},
  };
  return *table;
}

}  // namespace

bool IsElementwise(Opcode op) {
  return hlo::HasOpDef(op) && hlo::GetOpDef(op).traits.elementwise;
}

const OpPropagation& PropagationOf(const Instruction& inst, State& state) {
  if (inst.opcode() == Opcode::kCustomCall) {
    const std::string& target = inst.attr_string("custom_call_target");
    if (target == hlo::kShardingTarget) return kShardingCall;
    if (hlo::IsManualRegionMarker(target)) return kManualMarker;
    if (target == hlo::kShardBarrierFromTarget) return kShardBarrierFrom;
    if (target == hlo::kShardBarrierToTarget) return kShardBarrierTo;
    if (hlo::IsMemorySpaceAnnotation(target) && inst.shape().is_array()) return kElementwise;
    const bool same_rank = inst.operand_count() == 1 && inst.shape().is_array() &&
                           inst.operand(0)->shape().is_array() &&
                           inst.operand(0)->shape().rank() == inst.shape().rank();
    if (inst.shape().is_array() && inst.operand_count() > 0 &&
        hlo::IsShardingPassthroughTarget(target, same_rank)) {
      return kElementwiseFromOperand0;
    }
    return kWhole;
  }
  const auto& table = Table();
  if (auto it = table.find(inst.opcode()); it != table.end()) return it->second;
  if (IsElementwise(inst.opcode())) return kElementwise;
  const ShardingRule* rule = state.RuleOf(inst);
  if (rule != nullptr && rule->kind == ShardingRule::Kind::kFactors) return kFactorRule;
  return kWhole;
}

}  // namespace sharc::spmd::internal
