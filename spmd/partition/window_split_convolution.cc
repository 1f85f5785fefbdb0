#include "spmd/partition/window_split_convolution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/ops/convolution_dims.h"
#include "spmd/partition/halo_blocks.h"
#include "spmd/partition/reshard.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Sharding;

namespace {

// The one dim `s` splits, or nullopt if none or several.
std::optional<int64_t> OnlySplitDim(const Sharding& s, int64_t rank) {
  if (!s.IsTiled() || s.HasManualSubgroup() || s.HasUnreduced()) return std::nullopt;
  std::optional<int64_t> split;
  for (int64_t d = 0; d < rank; ++d) {
    if (s.TileCount(d) == 1) continue;
    if (split) return std::nullopt;
    split = d;
  }
  return split;
}

}  // namespace

std::optional<WindowSplitPlan> PlanWindowSplitConvolution(const Instruction& conv,
                                                          const Sharding& lhs,
                                                          const Sharding& rhs) {
  if (conv.opcode() != hlo::Opcode::kConvolution || !conv.shape().is_array()) return std::nullopt;
  absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(conv);
  if (!cd.ok() || cd->feature_group_count != 1 || cd->batch_group_count != 1) return std::nullopt;
  const hlo::Shape& in = conv.operand(0)->shape();
  const hlo::Shape& kernel = conv.operand(1)->shape();
  std::optional<int64_t> ld = OnlySplitDim(lhs, in.rank());
  std::optional<int64_t> rd = OnlySplitDim(rhs, kernel.rank());
  if (!ld || !rd) return std::nullopt;
  const auto k_it = std::find(cd->lhs_spatial.begin(), cd->lhs_spatial.end(), *ld);
  if (k_it == cd->lhs_spatial.end()) return std::nullopt;
  const size_t k = static_cast<size_t>(k_it - cd->lhs_spatial.begin());
  const hlo::ConvWindowDim& w = cd->window[k];
  const int64_t n = lhs.TileCount(*ld);
  const int64_t out = conv.shape().dim(cd->out_spatial[k]);
  if (cd->rhs_spatial[k] != *rd || rhs.TileCount(*rd) != n || w.lhs_dilation != 1 ||
      w.reversed || out >= w.size) {
    return std::nullopt;
  }
  // One window over the whole input is a plain contraction: the sharding
  // rule splits it with no halo.
  const int64_t length = in.dim(*ld);
  if (w.CoversWholeInput(length)) return std::nullopt;
  WindowSplitPlan plan;
  plan.spatial = k;
  plan.groups = GroupsAlongDims(lhs, {*ld});
  if (plan.groups != GroupsAlongDims(rhs, {*rd})) return std::nullopt;
  // Kernel block i holds taps [i*B, i*B + B); with them, result position o
  // reads input o*stride + tap*dilation - pad_lo.
  const int64_t taps = w.size, block = CeilDiv(taps, n);
  DimAccess access;
  access.changed = true;
  access.window = (out - 1) * w.stride + (block - 1) * w.rhs_dilation + 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t start = i * block * w.rhs_dilation - w.pad_lo;
    const int64_t valid = std::clamp<int64_t>(taps - i * block, 0, block);
    const int64_t lo = std::clamp<int64_t>(start, 0, length);
    const int64_t hi =
        valid > 0 ? std::clamp<int64_t>(start + (out - 1) * w.stride + (valid - 1) * w.rhs_dilation + 1,
                                        lo, length)
                  : lo;
    access.start.push_back(start);
    access.used_lo.push_back(lo);
    access.used_hi.push_back(hi);
  }
  int64_t devices = 0;
  for (int64_t id : lhs.tile_assignment().devices()) devices = std::max(devices, id + 1);
  std::vector<int64_t> sends(static_cast<size_t>(devices), 0);
  plan.input = PlanDim(lhs, in, *ld, n, CeilDiv(length, n), out, access, sends);
  plan.kernel_tile = block;
  for (int64_t bytes : sends) plan.bytes_sent = std::max(plan.bytes_sent, bytes);
  return plan;
}

absl::StatusOr<Instruction*> LowerWindowSplitConvolution(
    LocalBuilder& b, const Instruction& conv, const WindowSplitPlan& plan, Instruction* input,
    Instruction* kernel, const Sharding& rhs, const EmitLocalOp& emit) {
  absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(conv);
  if (!cd.ok()) return cd.status();
  const hlo::Shape& in = conv.operand(0)->shape();
  const int64_t kd = cd->rhs_spatial[plan.spatial];
  if (input->shape().dim(plan.input.dim) != plan.input.operand_tile ||
      kernel->shape().dim(kd) != plan.kernel_tile) {
    return absl::InternalError(
        absl::StrCat("window-split convolution: unexpected local shapes in ", conv.Describe()));
  }
  Instruction* window = MaskOutside(b, FetchWindow(b, input, plan.input), plan.input,
                                    in.dim(plan.input.dim), b.ScalarConstant(in.type(), 0));
  // An uneven kernel split leaves padding taps (whole tiles of them where
  // there are more devices than taps): zero, they add nothing.
  const hlo::Shape& whole_kernel = conv.operand(1)->shape();
  if (plan.kernel_tile * rhs.TileCount(kd) != whole_kernel.dim(kd)) {
    Instruction* offset = b.PerDeviceValue(TileOffsets(rhs, whole_kernel, kd, b.num_devices()),
                                           "kernel.offset");
    kernel = b.MaskPadding(kernel, kd, offset, whole_kernel.dim(kd),
                           b.ScalarConstant(whole_kernel.type(), 0));
  }
  hlo::IntListList attr = conv.attr_int_lists("window");
  std::vector<int64_t>& w = attr[plan.spatial];
  w[0] = plan.kernel_tile;
  w[2] = w[3] = 0;  // the fetched window holds the padding as zeros
  Instruction* partial = emit({window, kernel}, conv.shape());
  partial->set_attr("window", std::move(attr));
  return partial;
}

}  // namespace sharc::spmd
