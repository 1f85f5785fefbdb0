// Gather and scatter. Dimensions that carry whole operand slices or whole
// index batches pass through ("operand passthrough" and "index passthrough"
// in GSPMD's terms); the dimensions being indexed cannot be split, except a
// scatter's inserted dims, whose indices the partitioner shifts per device,
// and a gather's collapsed ones, whose rows each device gathers from its
// shard and masks (an all-reduce adds them).
#include <algorithm>

#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::StatusOr<ShardingRule> GatherRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& indices = inst.operand(1)->shape();
  const hlo::Shape& out = inst.shape();
  const auto& offset_dims = inst.attr_ints("offset_dims");
  const auto& collapsed = inst.attr_ints("collapsed_slice_dims");
  const auto& slice_sizes = inst.attr_ints("slice_sizes");
  const auto& operand_batching = inst.attr_ints("operand_batching_dims");
  const auto& indices_batching = inst.attr_ints("start_indices_batching_dims");
  const int64_t index_vector_dim = inst.attr_int("index_vector_dim");

  DimFactors op(operand.rank()), idx(indices.rank()), res(out.rank());
  // Output batch dims follow the index dims (index_vector_dim excluded).
  int64_t index_dim = 0;
  for (int64_t d = 0; d < out.rank(); ++d) {
    if (Contains(offset_dims, d)) continue;
    if (index_dim == index_vector_dim) ++index_dim;
    int64_t f = rule.AddFactor(out.dim(d), FactorKind::kPassThrough);
    res[d] = {f};
    if (index_dim < indices.rank()) {
      idx[index_dim] = {f};
      auto it = std::find(indices_batching.begin(), indices_batching.end(), index_dim);
      if (it != indices_batching.end()) {
        op[operand_batching[static_cast<size_t>(it - indices_batching.begin())]] = {f};
      }
    }
    ++index_dim;
  }
  // Output offset dims follow the operand dims that are neither collapsed
  // nor batching; they pass through only when the slice takes the whole dim
  // (an index into such a dim is clamped to 0, so it does not matter). A
  // partial slice's dim cannot be split on the result either: no device's
  // shard of the operand holds the part of the slice its result tile needs.
  int64_t operand_dim = 0;
  for (int64_t d : offset_dims) {
    while (operand_dim < operand.rank() &&
           (Contains(collapsed, operand_dim) || Contains(operand_batching, operand_dim)))
      ++operand_dim;
    if (operand_dim >= operand.rank() || d >= out.rank()) break;
    bool whole = slice_sizes[static_cast<size_t>(operand_dim)] == operand.dim(operand_dim);
    int64_t f = rule.AddFactor(out.dim(d),
                               whole ? FactorKind::kPassThrough : FactorKind::kNeedReplication);
    res[d] = {f};
    if (whole) op[operand_dim] = {f};
    ++operand_dim;
  }
  // A collapsed dim the indices address may stay split: each device
  // gathers the rows its shard holds, zeroes the others, and the partial
  // results are added (split_gather.h) -- a reduction factor. (Not for
  // pred, which has no add.) Any other dim of the operand is whole.
  const auto& index_map = inst.attr_ints("start_index_map");
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (!op[d].empty()) continue;
    const bool rows = Contains(collapsed, d) && Contains(index_map, d) &&
                      out.type() != hlo::PrimitiveType::kPred;
    op[d] = {rule.AddFactor(operand.dim(d),
                            rows ? FactorKind::kReduction : FactorKind::kNeedReplication)};
  }
  if (index_vector_dim < indices.rank()) {
    idx[index_vector_dim] = {
        rule.AddFactor(indices.dim(index_vector_dim), FactorKind::kNeedReplication)};
  }
  rule.operands = {op, idx};
  rule.results = {res};
  return rule;
}

absl::StatusOr<ShardingRule> ScatterRule(const Instruction& inst) {
  if (inst.operand_count() != 3) {
    ShardingRule rule;
    rule.kind = ShardingRule::Kind::kReplicated;
    rule.reason = "variadic scatter";
    return rule;
  }
  ShardingRule rule;
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& indices = inst.operand(1)->shape();
  const hlo::Shape& updates = inst.operand(2)->shape();
  const auto& window_dims = inst.attr_ints("update_window_dims");
  const auto& inserted = inst.attr_ints("inserted_window_dims");
  const auto& to_operand = inst.attr_ints("scatter_dims_to_operand_dims");
  const auto& input_batching = inst.attr_ints("input_batching_dims");
  const auto& indices_batching = inst.attr_ints("scatter_indices_batching_dims");
  const int64_t index_vector_dim = inst.attr_int("index_vector_dim");

  // Operand dims split three ways. Batching dims and whole, unindexed window
  // dims pass through to the indices or updates. An inserted dim that an
  // index component addresses can stay split on the operand and result only:
  // the partitioner subtracts each device's offset from that index component
  // (localize.cc), and the update lands on the one device whose shard holds
  // it, because scatter skips windows outside the operand. Every other dim
  // (a partial window, a window dim an index moves, an inserted dim no index
  // moves) must be whole: a device's shard would see the window at the wrong
  // place or not at all.
  DimFactors op(operand.rank()), idx(indices.rank()), upd(updates.rank());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    bool shiftable = Contains(inserted, d) && Contains(to_operand, d);
    bool passes = Contains(input_batching, d) || shiftable;
    op[d] = {rule.AddFactor(operand.dim(d),
                            passes ? FactorKind::kPassThrough : FactorKind::kNeedReplication)};
  }
  // Update window dims follow the operand dims that are neither inserted
  // nor batching.
  int64_t operand_dim = 0;
  for (int64_t d : window_dims) {
    while (operand_dim < operand.rank() &&
           (Contains(inserted, operand_dim) || Contains(input_batching, operand_dim)))
      ++operand_dim;
    if (operand_dim >= operand.rank() || d >= updates.rank()) break;
    bool whole = updates.dim(d) == operand.dim(operand_dim) && !Contains(to_operand, operand_dim);
    if (whole) rule.factors[static_cast<size_t>(op[operand_dim][0])].kind = FactorKind::kPassThrough;
    upd[d] = whole ? op[operand_dim]
                   : std::vector<int64_t>{rule.AddFactor(updates.dim(d), FactorKind::kNeedReplication)};
    ++operand_dim;
  }
  // Update scatter dims follow the index dims: splitting them means every
  // device scatters part of the updates, and the results must be combined.
  int64_t index_dim = 0;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    if (Contains(window_dims, d)) continue;
    if (index_dim == index_vector_dim) ++index_dim;
    auto it = std::find(indices_batching.begin(), indices_batching.end(), index_dim);
    std::vector<int64_t> f =
        it != indices_batching.end()
            ? op[input_batching[static_cast<size_t>(it - indices_batching.begin())]]
            : std::vector<int64_t>{rule.AddFactor(updates.dim(d), FactorKind::kReduction)};
    upd[d] = f;
    if (index_dim < indices.rank()) idx[index_dim] = f;
    ++index_dim;
  }
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (idx[d].empty()) idx[d] = {rule.AddFactor(indices.dim(d), FactorKind::kNeedReplication)};
  }
  rule.operands = {op, idx, upd};
  rule.results = {op};
  return rule;
}

}  // namespace

void RegisterGatherScatterRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kGather, GatherRule);
  registry.Register(Opcode::kScatter, ScatterRule);
}

}  // namespace sharc::spmd
