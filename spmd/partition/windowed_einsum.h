// Windowed einsum (GSPMD's "collective matmul"): a dot one of whose operands
// is all-gathered along one of its free (non-contracting, non-batch) dims
// runs instead as n partial dots, one per gathered chunk, while the chunks
// rotate around the device group by collective-permutes; each partial dot
// writes its block of the result with a dynamic-update-slice. No device
// ever holds the gathered operand, and each permute can overlap the next
// partial dot.
//
// Before (lhs f32[64,32] split 4 ways on rows, rhs f32[32,64] split 4 ways
// on columns, result split on rows):
//   rhs.g = f32[32,64] all-gather(rhs), dimensions={1}
//   dot = f32[16,64] dot(lhs, rhs.g)
// After (4 steps, unrolled):
//   d0 = f32[16,16] dot(lhs, rhs)           -> columns of chunk k
//   r1 = collective-permute(rhs), {{1,0},{2,1},{3,2},{0,3}}
//   d1 = f32[16,16] dot(lhs, r1)            -> columns of chunk k+1
//   ...
//   dot = dynamic-update-slices of d0..d3 into f32[16,64]
//
// Used when the gathered operand's global size is at least a threshold
// (XLA's threshold_for_windowed_einsum_mib, 256 MiB by default), the
// all-gather has no other user, and the gathered dim divides evenly.
//
// The reduce-scatter form: a dot split along its contracting dim whose
// partial result is reduce-scattered along a dim that comes from an
// operand's free dim. Each device computes the partial dot of one result
// block at a time (slicing that operand) and adds it to a running sum that
// travels around the group, so the last addition leaves each device its own
// block, summed over the group; no device holds the whole partial result.
//
// Before (lhs f32[64,32] and rhs f32[32,64] split 4 ways on the contracting
// dim, the result split on rows):
//   partial = f32[64,64] dot(lhs, rhs)
//   dot = f32[16,64] reduce-scatter(partial), dimensions={0}
// After (device p at step s computes block (p - s - 1) mod 4):
//   acc = f32[16,64] dot(dynamic-slice(lhs, block p-1), rhs)
//   acc = collective-permute(acc), {{0,1},{1,2},{2,3},{3,0}}
//   acc = add(acc, dot(dynamic-slice(lhs, block p-2), rhs))
//   ... (3 permutes)
//
// Used when the dot's global result is at least the threshold, the
// reduce-scatter is its only user, and the scattered dim divides evenly.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

inline constexpr int64_t kDefaultWindowedEinsumThresholdMib = 256;

struct WindowedDotPlan {
  int64_t operand = 0;     // which dot operand is gathered
  int64_t dim = 0;         // its gathered dim
  int64_t result_dim = 0;  // the dot result's dim that dim becomes
  int64_t chunk = 0;       // elements of one chunk along `dim`
  std::vector<std::vector<int64_t>> groups;  // devices along the gather, in chunk order
};

// A plan for the global-view `dot` when one operand is a global-view
// all-gather meeting the conditions above; nullopt otherwise. A negative
// threshold turns windowed einsum off.
std::optional<WindowedDotPlan> PlanWindowedDot(const hlo::Instruction& dot,
                                               int64_t threshold_bytes);

struct ReduceScatterDotPlan {
  int64_t operand = 0;     // the operand whose free dim is scattered
  int64_t dim = 0;         // that dim of the operand
  int64_t result_dim = 0;  // the dot result's dim it becomes
  std::vector<std::vector<int64_t>> groups;  // member i ends with block i
};

// A plan for the global-view `dot` whose only user is a global-view
// reduce-scatter meeting the conditions above; nullopt otherwise.
std::optional<ReduceScatterDotPlan> PlanReduceScatterDot(const hlo::Instruction& dot,
                                                         int64_t threshold_bytes);

// Emits the running sum: `operands` are this device's dot operands (with
// the dot's partial result of shape `partial_shape`); returns this
// device's block, summed over its group.
absl::StatusOr<hlo::Instruction*> LowerReduceScatterDot(
    LocalBuilder& b, const hlo::Instruction& dot, const ReduceScatterDotPlan& plan,
    std::vector<hlo::Instruction*> operands, const hlo::Shape& partial_shape,
    const std::function<hlo::Instruction*(const std::vector<hlo::Instruction*>&,
                                          const hlo::Shape&)>& emit_dot);

// Emits the partial dots: `operands` are this device's dot operands with the
// gathered one replaced by its block before the gather; `emit_dot` clones
// the dot onto given operands with a given local shape.
absl::StatusOr<hlo::Instruction*> LowerWindowedDot(
    LocalBuilder& b, const hlo::Instruction& dot, const WindowedDotPlan& plan,
    std::vector<hlo::Instruction*> operands, const hlo::Shape& local_shape,
    const std::function<hlo::Instruction*(const std::vector<hlo::Instruction*>&,
                                          const hlo::Shape&)>& emit_dot);

}  // namespace sharc::spmd
