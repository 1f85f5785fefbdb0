#include "spmd/partition/windowed_einsum.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ops/spmd_global_view.h"
#include "spmd/partition/global_view.h"
#include "spmd/partition/reshard.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// The dims of each dot operand that are neither batch nor contracting, and
// its contracting dims.
struct DotDims {
  std::vector<int64_t> batch[2], contracting[2], free[2];
};

DotDims DimsOf(const Instruction& dot) {
  DotDims dims;
  dims.batch[0] = dot.attr_ints("lhs_batch_dims");
  dims.batch[1] = dot.attr_ints("rhs_batch_dims");
  dims.contracting[0] = dot.attr_ints("lhs_contracting_dims");
  dims.contracting[1] = dot.attr_ints("rhs_contracting_dims");
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t d = 0; d < dot.operand(i)->shape().rank(); ++d) {
      if (!Contains(dims.batch[i], d) && !Contains(dims.contracting[i], d)) {
        dims.free[i].push_back(d);
      }
    }
  }
  return dims;
}

// The result dim of free dim `d` of operand `i` (batch, lhs free, rhs free).
int64_t ResultDimOf(const DotDims& dims, int64_t i, int64_t d) {
  const int64_t position =
      std::find(dims.free[i].begin(), dims.free[i].end(), d) - dims.free[i].begin();
  return static_cast<int64_t>(dims.batch[0].size()) +
         (i == 0 ? position : static_cast<int64_t>(dims.free[0].size()) + position);
}

// True if no contracting dim of either operand (laid out as `layouts`) needs
// padding masks: their splits divide.
bool ContractingSplitsDivide(const Instruction& dot, const DotDims& dims,
                             const Sharding layouts[2]) {
  for (int64_t j = 0; j < 2; ++j) {
    for (int64_t d : dims.contracting[j]) {
      const int64_t tiles = layouts[j].TileCount(d);
      if (tiles > 1 && dot.operand(j)->shape().dim(d) % tiles != 0) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<WindowedDotPlan> PlanWindowedDot(const Instruction& dot, int64_t threshold_bytes) {
  if (threshold_bytes < 0 || dot.opcode() != Opcode::kDot) return std::nullopt;
  const DotDims dims = DimsOf(dot);
  for (int64_t i = 0; i < 2; ++i) {
    const Instruction* gathered = dot.operand(i);
    if (gathered->opcode() != Opcode::kCustomCall ||
        gathered->attr_string("custom_call_target") != hlo::kSpmdAllGather ||
        gathered->users().size() != 1 || !gathered->shape().is_array()) {
      continue;
    }
    if (gathered->shape().byte_size() < threshold_bytes) continue;
    const Sharding after = ShardingOrReplicated(*gathered);
    const Sharding before = ShardingOrReplicated(*gathered->operand(0));
    if (!before.IsTiled() || before.HasManualSubgroup() || after.HasManualSubgroup()) continue;
    // Exactly one dim gathered, and nothing else changes.
    std::vector<int64_t> changed;
    for (int64_t d = 0; d < gathered->shape().rank(); ++d)
      if (before.TileCount(d) != after.TileCount(d)) changed.push_back(d);
    if (changed.size() != 1) continue;
    const int64_t g = changed[0];
    if (!Contains(dims.free[i], g) || after.TileCount(g) != 1) continue;
    // `after` is `before` with g whole (as GatherDims leaves it), or
    // replicated when g was the only split dim.
    bool only_g = true;
    for (int64_t d = 0; d < gathered->shape().rank(); ++d) only_g &= d == g || before.TileCount(d) == 1;
    if (!(ReplicateDims(before, {g}) == after || (after.IsReplicated() && only_g))) continue;
    const int64_t n = before.TileCount(g);
    if (gathered->shape().dim(g) % n != 0) continue;
    const Sharding layouts[2] = {i == 0 ? before : ShardingOrReplicated(*dot.operand(0)),
                                 i == 1 ? before : ShardingOrReplicated(*dot.operand(1))};
    if (!ContractingSplitsDivide(dot, dims, layouts)) continue;
    WindowedDotPlan plan;
    plan.operand = i;
    plan.dim = g;
    plan.result_dim = ResultDimOf(dims, i, g);
    plan.chunk = gathered->shape().dim(g) / n;
    plan.groups = GroupsAlongDims(before, {g});
    return plan;
  }
  return std::nullopt;
}

absl::StatusOr<Instruction*> LowerWindowedDot(
    LocalBuilder& b, const Instruction& dot, const WindowedDotPlan& plan,
    std::vector<Instruction*> operands, const Shape& local_shape,
    const std::function<Instruction*(const std::vector<Instruction*>&, const Shape&)>& emit_dot) {
  const int64_t n = static_cast<int64_t>(plan.groups[0].size());
  if (local_shape.dim(plan.result_dim) != plan.chunk * n ||
      operands[plan.operand]->shape().dim(plan.dim) != plan.chunk) {
    return absl::InternalError(absl::StrCat("windowed einsum: unexpected local shapes in ",
                                            dot.Describe()));
  }
  // Position of each device in its group: the chunk it holds at step 0.
  std::vector<int64_t> position(static_cast<size_t>(b.num_devices()), 0);
  std::vector<std::vector<int64_t>> pairs;
  for (const auto& group : plan.groups) {
    for (int64_t k = 0; k < n; ++k) {
      position[group[k]] = k;
      // Each device passes its chunk to the previous one, so device k holds
      // chunk k + s at step s.
      pairs.push_back({group[k], group[(k + n - 1) % n]});
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<int64_t> partial_dims = local_shape.dims();
  partial_dims[plan.result_dim] = plan.chunk;
  const Shape partial_shape(local_shape.type(), partial_dims);
  Instruction* result =
      b.Broadcast(b.ScalarConstant(local_shape.type(), 0), local_shape, {});
  Instruction* chunk = operands[plan.operand];
  for (int64_t s = 0; s < n; ++s) {
    if (s > 0) chunk = b.CollectivePermute(chunk, pairs);
    operands[plan.operand] = chunk;
    Instruction* partial = emit_dot(operands, partial_shape);
    std::vector<int64_t> offsets(static_cast<size_t>(b.num_devices()), 0);
    for (int64_t p = 0; p < b.num_devices(); ++p)
      offsets[p] = ((position[p] + s) % n) * plan.chunk;
    std::vector<Instruction*> update_operands{result, partial};
    for (int64_t d = 0; d < local_shape.rank(); ++d) {
      update_operands.push_back(d == plan.result_dim
                                    ? b.PerDeviceValue(offsets, "windowed.offset")
                                    : b.ConstantS32(0));
    }
    result = b.Add(Instruction::Create(Opcode::kDynamicUpdateSlice,
                                       b.FreshName("windowed.update"), local_shape,
                                       update_operands));
  }
  return result;
}

std::optional<ReduceScatterDotPlan> PlanReduceScatterDot(const Instruction& dot,
                                                         int64_t threshold_bytes) {
  if (threshold_bytes < 0 || dot.opcode() != Opcode::kDot || dot.users().size() != 1 ||
      !dot.shape().is_array() || dot.shape().byte_size() < threshold_bytes) {
    return std::nullopt;
  }
  const Instruction& scatter = *dot.users()[0];
  if (scatter.opcode() != Opcode::kCustomCall ||
      scatter.attr_string("custom_call_target") != hlo::kSpmdReduceScatter) {
    return std::nullopt;
  }
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ReplicaGroupsOf(scatter);
  if (!groups.ok() || groups->empty()) return std::nullopt;
  const int64_t n = static_cast<int64_t>((*groups)[0].size());
  const Sharding from = ShardingOrReplicated(dot), to = ShardingOrReplicated(scatter);
  if (n < 2 || from.HasManualSubgroup() || to.HasManualSubgroup() || to.HasUnreduced()) {
    return std::nullopt;
  }
  // The one result dim the reduce-scatter splits n ways further, evenly.
  std::optional<int64_t> scattered;
  for (int64_t d = 0; d < dot.shape().rank(); ++d) {
    if (to.TileCount(d) == from.TileCount(d)) continue;
    if (scattered || to.TileCount(d) != n * from.TileCount(d)) return std::nullopt;
    scattered = d;
  }
  if (!scattered || dot.shape().dim(*scattered) % to.TileCount(*scattered) != 0) {
    return std::nullopt;
  }
  const DotDims dims = DimsOf(dot);
  const Sharding layouts[2] = {ShardingOrReplicated(*dot.operand(0)),
                               ShardingOrReplicated(*dot.operand(1))};
  if (!ContractingSplitsDivide(dot, dims, layouts)) return std::nullopt;
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t d : dims.free[i]) {
      if (ResultDimOf(dims, i, d) != *scattered) continue;
      // The operand's dim is laid out as the partial result's.
      if (layouts[i].TileCount(d) != from.TileCount(*scattered)) return std::nullopt;
      ReduceScatterDotPlan plan;
      plan.operand = i;
      plan.dim = d;
      plan.result_dim = *scattered;
      plan.groups = *groups;
      return plan;
    }
  }
  return std::nullopt;  // a batch dim: not windowed
}

absl::StatusOr<Instruction*> LowerReduceScatterDot(
    LocalBuilder& b, const Instruction& dot, const ReduceScatterDotPlan& plan,
    std::vector<Instruction*> operands, const Shape& partial_shape,
    const std::function<Instruction*(const std::vector<Instruction*>&, const Shape&)>& emit_dot) {
  const int64_t n = static_cast<int64_t>(plan.groups[0].size());
  Instruction* sliced = operands[plan.operand];
  const int64_t extent = partial_shape.dim(plan.result_dim);
  if (extent % n != 0 || sliced->shape().dim(plan.dim) != extent) {
    return absl::InternalError(absl::StrCat("windowed einsum: unexpected local shapes in ",
                                            dot.Describe()));
  }
  const int64_t chunk = extent / n;
  std::vector<int64_t> position(static_cast<size_t>(b.num_devices()), 0);
  std::vector<std::vector<int64_t>> pairs;
  for (const auto& group : plan.groups) {
    for (int64_t k = 0; k < n; ++k) {
      position[group[k]] = k;
      pairs.push_back({group[k], group[(k + 1) % n]});  // the running sum moves on
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<int64_t> block_dims = partial_shape.dims();
  block_dims[plan.result_dim] = chunk;
  const Shape block_shape(partial_shape.type(), block_dims);
  std::vector<int64_t> slice_sizes = sliced->shape().dims();
  slice_sizes[plan.dim] = chunk;
  Instruction* sum = nullptr;
  for (int64_t s = 0; s < n; ++s) {
    // Device p adds its part of block (p - s - 1) mod n: after n steps the
    // sum it holds is its own block's.
    std::vector<int64_t> offsets(static_cast<size_t>(b.num_devices()), 0);
    for (int64_t p = 0; p < b.num_devices(); ++p)
      offsets[p] = ((position[p] - s - 1) % n + n) % n * chunk;
    std::vector<Instruction*> starts;
    for (int64_t d = 0; d < sliced->shape().rank(); ++d) {
      starts.push_back(d == plan.dim ? b.PerDeviceValue(offsets, "windowed.block")
                                     : b.ConstantS32(0));
    }
    operands[plan.operand] = b.DynamicSlice(sliced, starts, slice_sizes);
    Instruction* part = emit_dot(operands, block_shape);
    if (sum == nullptr) {
      sum = part;
      continue;
    }
    sum = b.CollectivePermute(sum, pairs);
    sum = b.Add(Instruction::Create(Opcode::kAdd, b.FreshName("windowed.sum"), block_shape,
                                    {sum, part}));
  }
  return sum;
}

}  // namespace sharc::spmd
