// A convolution split along its window: a weight gradient (the kernel is an
// activation gradient as wide as the input, the result a few taps) whose
// input and kernel are split alike along a spatial dim, as GSPMD partitions
// ConvolutionLhsTiledRhsTiledWithPadding. Each device convolves its kernel
// block with the input positions that block reads (its own input block plus
// a halo from its neighbours: the result's span minus one on one side, the
// padding on the other) and the partial results are all-reduced. Without
// this plan both operands are gathered.
//
// Before (x f32[16,28,4] and g f32[16,28,8] split 2 ways on dim 1, window
// 28 with padding 1_1, result f32[3,4,8] whole):
//   x.g = all-gather(x); g.g = all-gather(g); conv(x.g, g.g)
// After:
//   w = f32[16,16,4]: x's rows [14p-1, 14p+15), fetched by collective-permute,
//       rows outside [0, 28) zeroed
//   partial = f32[3,4,8] convolution(w, g), window={size=14}
//   conv = all-reduce(partial)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/halo.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

struct WindowSplitPlan {
  size_t spatial = 0;  // which window dim is split
  HaloDim input;       // the input's halo along it
  std::vector<std::vector<int64_t>> groups;  // devices whose partials add up
  int64_t kernel_tile = 0;                   // kernel elements per device
  int64_t bytes_sent = 0;                    // by the busiest device, halo only
};

// A plan for convolution `conv` whose input is laid out as `lhs` and kernel
// as `rhs`: exactly one spatial dim split, alike (same devices in the same
// order) on both and nothing else split, a window wider than the result
// (no base dilation, no reversal, one feature and batch group); nullopt
// otherwise.
std::optional<WindowSplitPlan> PlanWindowSplitConvolution(const hlo::Instruction& conv,
                                                          const hlo::Sharding& lhs,
                                                          const hlo::Sharding& rhs);

// This device's partial result (the whole result's shape) from its input
// and kernel blocks; `emit` clones the convolution.
absl::StatusOr<hlo::Instruction*> LowerWindowSplitConvolution(
    LocalBuilder& b, const hlo::Instruction& conv, const WindowSplitPlan& plan,
    hlo::Instruction* input, hlo::Instruction* kernel, const hlo::Sharding& rhs,
    const EmitLocalOp& emit);

}  // namespace sharc::spmd
