// Halo exchanges: slice, pad, reverse, concatenate, reduce-window and
// convolution along a split dim, as GSPMD does them. Instead of gathering the dim, each device fetches only the window
// of the operand its own block of the result needs, from the one or few
// devices that hold it, with collective-permutes, and applies the op to
// that window locally.
//
// Before (f32[16] split 4 ways, slice [1:13]; result split 4 ways):
//   all-gather the operand (f32[16] on every device), slice, take a block
// After:
//   x = f32[4] local shard
//   next = collective-permute(x), source_target_pairs={{1,0},{2,1},{3,2}}
//   w = dynamic-slice(concatenate(x, next), offset[partition-id], size 3)
//   -> f32[3], this device's block of the f32[12] result
//
// Each device's window starts at a static position (a per-device table);
// it spans K consecutive operand tiles, each fetched by a
// collective-permute from the device holding it along the split dim (in
// rounds, so that no device sends twice in one permute). Of a tile only the
// rows some receiver reads are sent (the halo), and tiles holding nothing a
// valid result element reads are not fetched. Elements of the
// window outside the operand (a pad's low or high edge, a reduce-window's
// padding) are replaced by the pad value, or by the identity of the
// reduce-window's reducer (add, multiply, maximum, minimum; the reference
// skips padding positions), and a reduce-window then runs once on the
// fetched windows with no padding left on those dims. A convolution split
// along a spatial dim reads its input like a reduce-window whose window is
// the kernel's span: the input takes the result's split, the kernel is
// whole on every device, positions outside the input are zero (the
// convolution's padding value), and the local convolution runs on the
// fetched window with no padding on those dims.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/sharding.h"
#include "spmd/partition/local_builder.h"

namespace sharc::spmd {

struct HaloDim {
  int64_t dim = 0;
  int64_t operand_tile = 0;  // t: operand elements per device along `dim`
  int64_t result_tile = 0;   // u: result elements per device along `dim`
  int64_t window = 0;        // W: operand elements each device's window spans
  int64_t tiles = 0;         // K: operand tiles a window may touch
  // By device id: the global operand position the window starts at (may lie
  // outside the operand), and for each of the K tiles the device holding
  // it, or -1 when nothing needed lies there (the local shard stands in).
  std::vector<int64_t> start;
  std::vector<std::vector<int64_t>> source;
  // For each of the K tiles, the part of it any receiver reads ([lo, hi) in
  // the tile's own positions): only that much is sent, the halo.
  std::vector<int64_t> send_lo, send_hi;
};

struct HaloPlan {
  std::vector<HaloDim> dims;
  // The sharding each operand takes: the result's for the data operand (a
  // concatenate's every operand), the result's split moved to the input's
  // dims for a convolution's input, replicated for scalars and a
  // convolution's kernel.
  std::vector<hlo::Sharding> operand_shardings;
  // Bytes the busiest device sends.
  int64_t bytes_sent = 0;
};

// A plan for `inst` (slice, pad without interior padding on split dims,
// reverse, concatenate, a single-input reduce-window whose reducer has a
// known identity and no dilation on split dims, or a convolution without
// base dilation on split spatial dims whose output feature is not split
// (nor its batch, under batch groups)) whose result has `sharding`, when
// some dim the op changes is split; nullopt when no such dim is split or
// the op is not one of these.
std::optional<HaloPlan> PlanHalo(const hlo::Instruction& inst, const hlo::Sharding& sharding);

// Clones `inst` into the per-device module with other operands and shape.
using EmitLocalOp = std::function<hlo::Instruction*(const std::vector<hlo::Instruction*>&,
                                                    const hlo::Shape&)>;

// This device's block of `inst`'s result from its local operands (the
// operand blocks, for pad and reduce-window the scalar, for a convolution
// the kernel), along `plan`; `to_apply` is a reduce-window's reducer in the
// per-device module, `emit` clones a convolution.
absl::StatusOr<hlo::Instruction*> LowerHalo(LocalBuilder& b, const hlo::Instruction& inst,
                                            const std::vector<hlo::Instruction*>& operands,
                                            const hlo::Sharding& sharding, const HaloPlan& plan,
                                            hlo::Computation* to_apply = nullptr,
                                            const EmitLocalOp& emit = nullptr);

}  // namespace sharc::spmd
