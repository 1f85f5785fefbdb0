#include "spmd/partition/windowed_einsum.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ops/spmd_global_view.h"
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

}  // namespace

std::optional<WindowedDotPlan> PlanWindowedDot(const Instruction& dot, int64_t threshold_bytes) {
  if (threshold_bytes < 0 || dot.opcode() != Opcode::kDot) return std::nullopt;
  const std::vector<int64_t> batch[2] = {dot.attr_ints("lhs_batch_dims"),
                                         dot.attr_ints("rhs_batch_dims")};
  const std::vector<int64_t> contracting[2] = {dot.attr_ints("lhs_contracting_dims"),
                                               dot.attr_ints("rhs_contracting_dims")};
  std::vector<int64_t> free[2];
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t d = 0; d < dot.operand(i)->shape().rank(); ++d)
      if (!Contains(batch[i], d) && !Contains(contracting[i], d)) free[i].push_back(d);
  }
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
    if (!Contains(free[i], g) || after.TileCount(g) != 1) continue;
    // `after` is `before` with g whole (as GatherDims leaves it), or
    // replicated when g was the only split dim.
    bool only_g = true;
    for (int64_t d = 0; d < gathered->shape().rank(); ++d) only_g &= d == g || before.TileCount(d) == 1;
    if (!(ReplicateDims(before, {g}) == after || (after.IsReplicated() && only_g))) continue;
    const int64_t n = before.TileCount(g);
    if (gathered->shape().dim(g) % n != 0) continue;
    // Contracting dims must not need padding masks (their splits divide).
    bool even = true;
    for (int64_t j = 0; j < 2; ++j) {
      const Sharding s = j == i ? before : ShardingOrReplicated(*dot.operand(j));
      for (int64_t d : contracting[j])
        even &= s.TileCount(d) <= 1 || dot.operand(j)->shape().dim(d) % s.TileCount(d) == 0;
    }
    if (!even) continue;
    WindowedDotPlan plan;
    plan.operand = i;
    plan.dim = g;
    const int64_t position =
        std::find(free[i].begin(), free[i].end(), g) - free[i].begin();
    plan.result_dim = static_cast<int64_t>(batch[0].size()) +
                      (i == 0 ? position : static_cast<int64_t>(free[0].size()) + position);
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

}  // namespace sharc::spmd
