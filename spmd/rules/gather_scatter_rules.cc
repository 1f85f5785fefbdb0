// Gather and scatter. Dimensions that carry whole operand slices or whole
// index batches pass through ("operand passthrough" and "index passthrough"
// in GSPMD's terms); the dimensions being indexed cannot be split, except a
// scatter's inserted dims, whose indices the partitioner shifts per device,
// and a gather's collapsed ones, whose rows each device gathers from its
// shard and masks (an all-reduce adds them).
//
// Indices built from iotas make their dims batch dims in all but name (XLA's
// GetGatherScatterBatchParallelDims): where an index component is an iota
// along an indices dim, of the size of the operand dim it addresses, with a
// slice of 1 there, row k of that indices dim reads row k of the operand
// dim. The two dims (and the result's) share one factor, like explicit
// batching dims; the partitioner shifts the component by each device's
// offset (the split-gather and scatter paths), so each device works on its
// own rows with no communication.
//   %i = s32[8,1] iota(), iota_dimension=0
//   %g = f32[8,4] gather(f32[8,4] %t, %i), offset_dims={1}, collapsed_slice_dims={0},
//        start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
//   ([i,j],[i,k])->([i,j]): %t's rows, %i's rows and %g's rows split alike
#include <algorithm>
#include <optional>
#include <utility>

#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/spmd_global_view.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// `value` seen through copies and layout-only steps (sharding
// constraints, the partitioner's reshards), which keep its values.
const Instruction* ThroughLayoutSteps(const Instruction* value) {
  while (value->opcode() == Opcode::kCopy ||
         (value->operand_count() == 1 && (hlo::IsCustomCallTo(*value, hlo::kShardingTarget) ||
                                          hlo::IsCustomCallTo(*value, hlo::kSpmdReshard)))) {
    value = value->operand(0);
  }
  return value;
}

// The dim along which `value` counts up 0, 1, 2, ... (an iota, a broadcast
// of one, an s32 constant holding one), looking through layout steps.
std::optional<int64_t> IotaDim(const Instruction* value) {
  value = ThroughLayoutSteps(value);
  if (!value->shape().is_array()) return std::nullopt;
  if (value->opcode() == Opcode::kIota) {
    // A narrow index type wraps (s8 counts 0..127 and then goes negative):
    // only 16 bits and wider, within range, or at most 8 long (s4 and up).
    const int64_t dim = value->attr_int("iota_dimension");
    const hlo::PrimitiveType type = value->shape().type();
    if (!hlo::IsInteger(type)) return std::nullopt;
    const int64_t bytes = hlo::ByteWidth(type);
    const int64_t last = value->shape().dim(dim) - 1;
    if (bytes < 2) return last < 8 ? std::optional<int64_t>(dim) : std::nullopt;
    const int64_t bits = 8 * bytes - (hlo::IsSignedInteger(type) ? 1 : 0);
    if (bits < 63 && last > (int64_t{1} << bits) - 1) return std::nullopt;
    return dim;
  }
  if (value->shape().type() != hlo::PrimitiveType::kS32) return std::nullopt;
  if (value->opcode() == Opcode::kBroadcast) {
    std::optional<int64_t> inner = IotaDim(value->operand(0));
    if (!inner) return std::nullopt;
    const auto& dims = value->attr_ints("dimensions");
    if (*inner >= static_cast<int64_t>(dims.size())) return std::nullopt;
    return dims[static_cast<size_t>(*inner)];
  }
  if (value->opcode() == Opcode::kConstant) {
    const hlo::Shape& shape = value->shape();
    const int64_t rank = shape.rank();
    std::vector<bool> counts_up(static_cast<size_t>(rank), true);
    std::vector<int64_t> index(static_cast<size_t>(rank), 0);
    const int64_t n = shape.num_elements();
    if (n > (int64_t{1} << 20)) return std::nullopt;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t v = value->literal().GetAsInt64(k);
      for (int64_t d = 0; d < rank; ++d) counts_up[d] = counts_up[d] && v == index[d];
      hlo::NextIndex(shape.dims(), index);
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (counts_up[d] && shape.dim(d) > 1) return d;
    }
  }
  return std::nullopt;
}

// (operand dim, indices dim) pairs the indices make batch dims, or none.
std::vector<std::pair<int64_t, int64_t>> ImplicitBatchDims(
    const hlo::Shape& operand, const Instruction* indices, const std::vector<int64_t>& slice_sizes,
    int64_t index_vector_dim, const std::vector<int64_t>& index_map,
    const std::vector<int64_t>& explicit_indices_batching) {
  std::vector<int64_t> iota_dim_of(index_map.size(), -1);
  const Instruction* source = ThroughLayoutSteps(indices);
  if (source->opcode() == Opcode::kConcatenate && !source->attr_ints("dimensions").empty() &&
      source->attr_ints("dimensions")[0] == index_vector_dim) {
    size_t at = 0;
    for (const Instruction* part : source->operands()) {
      const int64_t width = part->shape().rank() > index_vector_dim ? part->shape().dim(index_vector_dim) : 1;
      std::optional<int64_t> dim = IotaDim(part);
      for (int64_t j = 0; j < width && at < iota_dim_of.size(); ++j, ++at) {
        if (dim && *dim != index_vector_dim) iota_dim_of[at] = *dim;
      }
    }
  } else if (std::optional<int64_t> dim = IotaDim(indices); dim && *dim != index_vector_dim) {
    std::fill(iota_dim_of.begin(), iota_dim_of.end(), *dim);
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t c = 0; c < index_map.size(); ++c) {
    const int64_t indices_dim = iota_dim_of[c];
    if (indices_dim < 0) continue;
    for (const auto& [o, i] : pairs) {
      if (i == indices_dim) return {};
    }
    const int64_t operand_dim = index_map[c];
    if (operand_dim < 0 || operand_dim >= operand.rank() || indices_dim >= indices->shape().rank() ||
        slice_sizes[static_cast<size_t>(operand_dim)] != 1 ||
        Contains(explicit_indices_batching, indices_dim)) {
      continue;
    }
    if (operand.dim(operand_dim) != indices->shape().dim(indices_dim)) return {};
    pairs.emplace_back(operand_dim, indices_dim);
  }
  return pairs;
}

absl::StatusOr<ShardingRule> GatherRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& indices = inst.operand(1)->shape();
  const hlo::Shape& out = inst.shape();
  const auto& offset_dims = inst.attr_ints("offset_dims");
  const auto& collapsed = inst.attr_ints("collapsed_slice_dims");
  const auto& slice_sizes = inst.attr_ints("slice_sizes");
  std::vector<int64_t> operand_batching = inst.attr_ints("operand_batching_dims");
  std::vector<int64_t> indices_batching = inst.attr_ints("start_indices_batching_dims");
  const int64_t index_vector_dim = inst.attr_int("index_vector_dim");
  // Implicit batch dims join the explicit ones where the operand dim is
  // collapsed (the result then has no dim of its own for it).
  const std::vector<int64_t> explicit_collapsed = inst.attr_ints("collapsed_slice_dims");
  for (const auto& [o, i] : ImplicitBatchDims(operand, inst.operand(1), inst.attr_ints("slice_sizes"),
                                              index_vector_dim, inst.attr_ints("start_index_map"),
                                              indices_batching)) {
    if (!Contains(explicit_collapsed, o)) continue;
    operand_batching.push_back(o);
    indices_batching.push_back(i);
  }

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

// A variadic scatter (n operands, one indices, n updates, n results)
// scatters every operand at the same places: all operands and results share
// one set of factors, all updates another.
absl::StatusOr<ShardingRule> ScatterRule(const Instruction& inst) {
  if (inst.operand_count() < 3 || inst.operand_count() % 2 == 0) {
    ShardingRule rule;
    rule.kind = ShardingRule::Kind::kReplicated;
    rule.reason = "scatter with an even operand count";
    return rule;
  }
  const int64_t n = (inst.operand_count() - 1) / 2;
  ShardingRule rule;
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& indices = inst.operand(n)->shape();
  const hlo::Shape& updates = inst.operand(n + 1)->shape();
  const auto& window_dims = inst.attr_ints("update_window_dims");
  const auto& inserted = inst.attr_ints("inserted_window_dims");
  const auto& to_operand = inst.attr_ints("scatter_dims_to_operand_dims");
  std::vector<int64_t> input_batching = inst.attr_ints("input_batching_dims");
  std::vector<int64_t> indices_batching = inst.attr_ints("scatter_indices_batching_dims");
  const int64_t index_vector_dim = inst.attr_int("index_vector_dim");
  // Implicit batch dims (above) join the explicit ones where the operand dim
  // is an inserted window dim (a window of 1 the update does not have).
  {
    std::vector<int64_t> slice_sizes(static_cast<size_t>(operand.rank()), 1);
    int64_t k = 0;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (Contains(inserted, d) || Contains(input_batching, d)) continue;
      if (k < static_cast<int64_t>(window_dims.size()) && window_dims[static_cast<size_t>(k)] < updates.rank()) {
        slice_sizes[static_cast<size_t>(d)] = updates.dim(window_dims[static_cast<size_t>(k)]);
      }
      ++k;
    }
    for (const auto& [o, i] : ImplicitBatchDims(operand, inst.operand(n), slice_sizes, index_vector_dim,
                                                to_operand, indices_batching)) {
      if (!Contains(inserted, o)) continue;
      input_batching.push_back(o);
      indices_batching.push_back(i);
    }
  }

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
  rule.operands.assign(static_cast<size_t>(n), op);
  rule.operands.push_back(idx);
  rule.operands.insert(rule.operands.end(), static_cast<size_t>(n), upd);
  rule.results.assign(static_cast<size_t>(n), op);
  return rule;
}

}  // namespace

void RegisterGatherScatterRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kGather, GatherRule);
  registry.Register(Opcode::kScatter, ScatterRule);
}

}  // namespace sharc::spmd
