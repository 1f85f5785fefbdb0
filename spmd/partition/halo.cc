#include "spmd/partition/halo.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/convolution_dims.h"
#include "spmd/partition/halo_blocks.h"
#include "spmd/partition/reshard.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::Sharding;

namespace {

// The identity of a reduce-window's reducer, when it is one binary op of
// its two parameters (add, multiply, maximum, minimum; the last two on
// floating-point types). Positions outside the operand are masked with it:
// the reference semantics skip them, and the init value enters each window
// once, in the local reduce-window.
std::optional<double> ReducerIdentity(const Instruction& inst) {
  const hlo::Computation* c = inst.attr_computation("to_apply");
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const Instruction* root = c->root();
  if (root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter ||
      root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  const bool fp = hlo::IsFloatingPoint(inst.shape().type());
  switch (root->opcode()) {
    case Opcode::kAdd:
      return 0.0;
    case Opcode::kMultiply:
      return 1.0;
    case Opcode::kMaximum:
      if (fp) return -std::numeric_limits<double>::infinity();
      return std::nullopt;
    case Opcode::kMinimum:
      if (fp) return std::numeric_limits<double>::infinity();
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// How result block i along `d` reads the operand, per op. `n` tiles of `t`
// operand and `u` result elements.
std::optional<DimAccess> Access(const Instruction& inst, int64_t d, int64_t n, int64_t t,
                                int64_t u) {
  const int64_t N = inst.operand(0)->shape().dim(d), M = inst.shape().dim(d);
  DimAccess a;
  a.start.resize(n);
  a.used_lo.resize(n);
  a.used_hi.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t valid = std::clamp<int64_t>(M - i * u, 0, u);
    int64_t start = 0, lo = 0, hi = 0;
    switch (inst.opcode()) {
      case Opcode::kSlice: {
        const std::vector<int64_t>& spec = inst.attr_int_lists("slice")[static_cast<size_t>(d)];
        const int64_t begin = spec[0], limit = spec[1], stride = spec.size() > 2 ? spec[2] : 1;
        a.changed = begin != 0 || limit != N || stride != 1;
        a.window = (u - 1) * stride + 1;
        start = begin + i * u * stride;
        lo = start;
        hi = valid > 0 ? start + (valid - 1) * stride + 1 : start;
        break;
      }
      case Opcode::kPad: {
        const std::vector<int64_t>& e = inst.attr_int_lists("padding")[static_cast<size_t>(d)];
        const int64_t low = e[0], high = e[1], interior = e.size() > 2 ? e[2] : 0;
        a.changed = low != 0 || high != 0 || interior != 0;
        if (interior != 0) return std::nullopt;
        a.window = u;
        start = i * u - low;
        lo = std::max<int64_t>(start, 0);
        hi = std::min(start + valid, N);
        break;
      }
      case Opcode::kReverse: {
        const auto& dims = inst.attr_ints("dimensions");
        a.changed = std::find(dims.begin(), dims.end(), d) != dims.end();
        a.window = t;
        start = N - (i + 1) * t;
        lo = N - i * t - valid;
        hi = N - i * t;
        break;
      }
      case Opcode::kReduceWindow: {
        // size, stride, pad_lo, pad_hi, base and window dilation; the
        // window of result block i covers padded positions
        // [i*u*stride, (i*u + u - 1)*stride + size).
        const std::vector<int64_t>& w = inst.attr_int_lists("window")[static_cast<size_t>(d)];
        const int64_t size = w[0], stride = w[1], low = w[2], high = w[3];
        a.changed = !(size == 1 && stride == 1 && low == 0 && high == 0 && w[4] == 1 && w[5] == 1);
        if (w[4] != 1 || w[5] != 1) return std::nullopt;
        a.window = (u - 1) * stride + size;
        start = i * u * stride - low;
        lo = std::max<int64_t>(start, 0);
        hi = valid > 0 ? std::min(start + (valid - 1) * stride + size, N) : lo;
        break;
      }
      default:
        return std::nullopt;
    }
    a.start[i] = start;
    a.used_lo[i] = lo;
    a.used_hi[i] = hi;
  }
  return a;
}

Instruction* Compare(LocalBuilder& b, Instruction* x, Instruction* y, const char* direction) {
  auto c = Instruction::Create(Opcode::kCompare, b.FreshName("compare"),
                               Shape(PrimitiveType::kPred, x->shape().dims()), {x, y});
  c->set_attr("direction", std::string(direction));
  return b.Add(std::move(c));
}

Instruction* Select(LocalBuilder& b, Instruction* pred, Instruction* x, Instruction* y) {
  return b.Add(Instruction::Create(Opcode::kSelect, b.FreshName("select"), x->shape(), {pred, x, y}));
}

std::vector<int64_t> Table(const std::vector<int64_t>& by_device, int64_t num_devices) {
  std::vector<int64_t> t = by_device;
  t.resize(static_cast<size_t>(num_devices), 0);
  return t;
}

}  // namespace

// Replaces the window's positions outside the operand ([0, size) along
// h.dim, this device's window starting at h.start) by `fill`.
Instruction* MaskOutside(LocalBuilder& b, Instruction* w, const HaloDim& h, int64_t size,
                         Instruction* fill) {
  if (fill->shape().rank() == 0) fill = b.Broadcast(fill, w->shape(), {});
  Shape index_shape(PrimitiveType::kS32, w->shape().dims());
  auto iota = Instruction::Create(Opcode::kIota, b.FreshName("iota"), index_shape);
  iota->set_attr("iota_dimension", h.dim);
  Instruction* idx = b.Add(std::move(iota));
  Instruction* start = b.Broadcast(
      b.PerDeviceValue(Table(h.start, b.num_devices()), "halo.start"), index_shape, {});
  Instruction* global =
      b.Add(Instruction::Create(Opcode::kAdd, b.FreshName("add"), index_shape, {idx, start}));
  Instruction* ge = Compare(b, global, b.Broadcast(b.ConstantS32(0), index_shape, {}), "GE");
  Instruction* lt = Compare(b, global, b.Broadcast(b.ConstantS32(size), index_shape, {}), "LT");
  Instruction* inside =
      b.Add(Instruction::Create(Opcode::kAnd, b.FreshName("and"),
                                Shape(PrimitiveType::kPred, w->shape().dims()), {ge, lt}));
  return Select(b, inside, w, fill);
}

// The K operand tiles each device's window touches, concatenated along
// the dim, then the W-element window itself.
Instruction* FetchWindow(LocalBuilder& b, Instruction* x, const HaloDim& h) {
  const int64_t d = h.dim, devices = static_cast<int64_t>(h.start.size());
  std::vector<Instruction*> pieces;
  for (int64_t r = 0; r < h.tiles; ++r) {
    // Rounds of pairs in which no device sends twice.
    std::vector<std::vector<std::vector<int64_t>>> rounds;
    std::vector<std::set<int64_t>> senders;
    std::vector<int64_t> round_of(static_cast<size_t>(devices), -1);
    for (int64_t p = 0; p < devices; ++p) {
      const int64_t src = h.source[p][r];
      if (src < 0 || src == p) continue;
      size_t k = 0;
      while (k < rounds.size() && senders[k].count(src)) ++k;
      if (k == rounds.size()) {
        rounds.emplace_back();
        senders.emplace_back();
      }
      rounds[k].push_back({src, p});
      senders[k].insert(src);
      round_of[p] = static_cast<int64_t>(k);
    }
    Instruction* piece = x;
    // Only the rows some receiver reads travel; they are padded back to a
    // whole tile where they arrive (the rest is never read).
    Instruction* halo = x;
    const int64_t lo = rounds.empty() ? 0 : h.send_lo[r], hi = rounds.empty() ? 0 : h.send_hi[r];
    const int64_t t = h.operand_tile;
    if (!rounds.empty() && (lo > 0 || hi < t)) {
      hlo::IntListList spec;
      std::vector<int64_t> dims = x->shape().dims();
      for (int64_t k = 0; k < x->shape().rank(); ++k)
        spec.push_back(k == d ? std::vector<int64_t>{lo, hi, 1}
                              : std::vector<int64_t>{0, x->shape().dim(k), 1});
      dims[d] = hi - lo;
      auto c = Instruction::Create(Opcode::kSlice, b.FreshName("halo.send"),
                                   Shape(x->shape().type(), dims), {x});
      c->set_attr("slice", std::move(spec));
      halo = b.Add(std::move(c));
    }
    for (size_t k = 0; k < rounds.size(); ++k) {
      std::sort(rounds[k].begin(), rounds[k].end());
      Instruction* received = b.CollectivePermute(halo, rounds[k]);
      if (halo != x) {
        hlo::IntListList config;
        for (int64_t e = 0; e < x->shape().rank(); ++e)
          config.push_back(e == d ? std::vector<int64_t>{lo, t - hi, 0}
                                  : std::vector<int64_t>{0, 0, 0});
        auto c = Instruction::Create(Opcode::kPad, b.FreshName("halo.received"), x->shape(),
                                     {received, b.ScalarConstant(x->shape().type(), 0)});
        c->set_attr("padding", std::move(config));
        received = b.Add(std::move(c));
      }
      std::vector<int64_t> mine(static_cast<size_t>(devices), 0);
      bool everyone = true;
      for (int64_t p = 0; p < devices; ++p) {
        mine[p] = round_of[p] == static_cast<int64_t>(k);
        everyone &= mine[p] == 1;
      }
      if (everyone && b.num_devices() == devices) {
        piece = received;
        continue;
      }
      // Devices that received nothing in this round keep what they had.
      Instruction* flag = b.PerDeviceValue(Table(mine, b.num_devices()), "halo.round");
      Instruction* is = Compare(b, flag, b.ConstantS32(1), "EQ");
      piece = Select(b, b.Broadcast(is, Shape(PrimitiveType::kPred, x->shape().dims()), {}),
                     received, piece);
    }
    pieces.push_back(piece);
  }
  Instruction* buffer = pieces[0];
  if (pieces.size() > 1) {
    std::vector<int64_t> dims = x->shape().dims();
    dims[d] *= static_cast<int64_t>(pieces.size());
    auto c = Instruction::Create(Opcode::kConcatenate, b.FreshName("halo.concatenate"),
                                 Shape(x->shape().type(), dims), pieces);
    c->set_attr("dimensions", hlo::IntList{d});
    buffer = b.Add(std::move(c));
  }
  std::vector<int64_t> offsets(static_cast<size_t>(devices), 0);
  for (int64_t p = 0; p < devices; ++p)
    offsets[p] = h.start[p] - FloorDiv(h.start[p], h.operand_tile) * h.operand_tile;
  std::vector<Instruction*> starts;
  std::vector<int64_t> sizes = x->shape().dims();
  sizes[d] = h.window;
  for (int64_t k = 0; k < x->shape().rank(); ++k) {
    starts.push_back(k == d ? b.PerDeviceValue(Table(offsets, b.num_devices()), "halo.offset")
                            : b.ConstantS32(0));
  }
  return b.DynamicSlice(buffer, starts, sizes);
}

namespace {

}  // namespace

// The halo of dim `d` of an operand of `in` split in `n` tiles of `t`,
// read through `a` by result blocks of `u`; adds each device's sends
// (bytes) to `sends`.
HaloDim PlanDim(const Sharding& s, const Shape& in, int64_t d, int64_t n, int64_t t, int64_t u,
                const DimAccess& a, std::vector<int64_t>& sends) {
  const int64_t devices = static_cast<int64_t>(sends.size());
  HaloDim h;
  h.dim = d;
  h.operand_tile = t;
  h.result_tile = u;
  h.window = a.window;
  h.start.assign(static_cast<size_t>(devices), 0);
  h.source.assign(static_cast<size_t>(devices), {});
  const std::vector<std::vector<int64_t>> groups = GroupsAlongDims(s, {d});
  for (const auto& group : groups) {
    for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
      const int64_t start = a.start[i];
      const int64_t q = FloorDiv(start, t);
      h.tiles = std::max(h.tiles, FloorDiv(start + h.window - 1, t) - q + 1);
    }
  }
  h.send_lo.assign(static_cast<size_t>(h.tiles), t);
  h.send_hi.assign(static_cast<size_t>(h.tiles), 0);
  for (const auto& group : groups) {
    for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
      const int64_t p = group[i];
      const int64_t start = a.start[i], q = FloorDiv(start, t);
      h.start[p] = start;
      for (int64_t r = 0; r < h.tiles; ++r) {
        const int64_t j = q + r;
        const int64_t lo = std::max(j * t, a.used_lo[i]), hi = std::min((j + 1) * t, a.used_hi[i]);
        const bool needed = j >= 0 && j < n && lo < hi;
        const int64_t src = needed ? group[j] : -1;
        h.source[p].push_back(src);
        if (src >= 0 && src != p) {
          h.send_lo[r] = std::min(h.send_lo[r], lo - j * t);
          h.send_hi[r] = std::max(h.send_hi[r], hi - j * t);
        }
      }
    }
  }
  // Rows each device sends along this dim, times the bytes of a row of
  // its operand block.
  const int64_t row_bytes = s.ShardShape(in).byte_size() / t;
  for (int64_t p = 0; p < devices; ++p) {
    for (int64_t r = 0; r < h.tiles; ++r) {
      const int64_t src = h.source[p].empty() ? -1 : h.source[p][r];
      if (src >= 0 && src != p) sends[src] += (h.send_hi[r] - h.send_lo[r]) * row_bytes;
    }
  }
  return h;
}

namespace {

// A concatenate along a split dim: each operand k, at offset o_k of the
// result, is read like a pad of it with o_k rows before and the other
// operands' rows after; result block i takes each position from the one
// operand whose rows hold it.
std::optional<HaloPlan> PlanConcatenate(const Instruction& inst, const Sharding& s,
                                        std::vector<int64_t>& sends) {
  const int64_t d = inst.attr_ints("dimensions")[0];
  const int64_t n = s.TileCount(d);
  if (n <= 1) return std::nullopt;
  const int64_t M = inst.shape().dim(d), u = CeilDiv(M, n);
  HaloPlan plan;
  int64_t offset = 0;
  for (const Instruction* operand : inst.operands()) {
    const Shape& in = operand->shape();
    const int64_t N = in.dim(d), t = CeilDiv(N, n);
    if (t == 0) return std::nullopt;
    DimAccess a;
    a.changed = true;
    a.window = u;
    a.start.resize(static_cast<size_t>(n));
    a.used_lo.resize(static_cast<size_t>(n));
    a.used_hi.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t valid = std::clamp<int64_t>(M - i * u, 0, u);
      a.start[i] = i * u - offset;
      a.used_lo[i] = std::max<int64_t>(a.start[i], 0);
      a.used_hi[i] = std::min(a.start[i] + valid, N);
    }
    plan.dims.push_back(PlanDim(s, in, d, n, t, u, a, sends));
    offset += N;
  }
  return plan;
}

// The convolution input's sharding that matches a result split `s`: each
// input dim tiled as the result dim it maps to (batch to batch, spatial to
// spatial, input feature to output feature), devices unchanged.
Sharding ConvInputSharding(const Sharding& s, const hlo::ConvDims& cd) {
  std::vector<int64_t> perm(static_cast<size_t>(s.tile_assignment().num_dims()));
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
  perm[cd.lhs_batch] = cd.out_batch;
  perm[cd.lhs_feature] = cd.out_feature;
  for (size_t k = 0; k < cd.lhs_spatial.size(); ++k) perm[cd.lhs_spatial[k]] = cd.out_spatial[k];
  return Sharding::Tiled(s.tile_assignment().Transposed(perm), s.subgroup_types());
}

// How result block i (of u, n blocks, M results) along one spatial dim of
// a convolution reads its input (N elements): the input's dilated
// positions [i*u*stride - pad_lo, ... + (u-1)*stride + span), span the
// dilated kernel's extent, of which the multiples of the base dilation ld
// are input elements. The local convolution reads the fetched input
// elements with the same dilations and local padding `pad_lo`, `pad_hi`
// that puts its first window where block i's starts. That padding is the
// same on every device only when u*stride is a multiple of ld (always,
// without base dilation); otherwise nullopt.
struct ConvHalo {
  DimAccess access;
  int64_t pad_lo = 0, pad_hi = 0;
};
std::optional<ConvHalo> ConvAccess(const hlo::ConvWindowDim& w, int64_t N, int64_t M, int64_t n,
                                   int64_t u) {
  const int64_t ld = w.lhs_dilation, span = (w.size - 1) * w.rhs_dilation + 1;
  if ((u * w.stride) % ld != 0) return std::nullopt;
  const int64_t length = (u - 1) * w.stride + span;  // dilated positions a block reads
  // From a block's first dilated position to its first input element.
  const int64_t skip = ((w.pad_lo % ld) + ld) % ld;
  if (skip >= length) return std::nullopt;
  ConvHalo h;
  h.access.changed = true;
  h.access.window = (length - 1 - skip) / ld + 1;
  h.pad_lo = skip;
  h.pad_hi = length - skip - ((h.access.window - 1) * ld + 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t valid = std::clamp<int64_t>(M - i * u, 0, u);
    const int64_t first = i * u * w.stride - w.pad_lo;  // dilated
    const int64_t start = (first + skip) / ld;
    const int64_t last =
        valid > 0 ? FloorDiv(first + (valid - 1) * w.stride + span - 1, ld) : start - 1;
    h.access.start.push_back(start);
    h.access.used_lo.push_back(std::max<int64_t>(start, 0));
    h.access.used_hi.push_back(std::max(std::min(last + 1, N), std::max<int64_t>(start, 0)));
  }
  return h;
}

bool Pointwise(const hlo::ConvWindowDim& w) {
  return w.size == 1 && w.stride == 1 && w.pad_lo == 0 && w.pad_hi == 0 && w.lhs_dilation == 1 &&
         w.rhs_dilation == 1;
}

// The kernel of a feature-grouped convolution whose result `s` splits the
// output features along whole groups: its output features split alike, on
// the same devices, the rest of it whole.
//   result {devices=[1,2,1,2]<=[4]} (b01f), kernel 01io
//     -> {devices=[1,1,1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}
Sharding GroupedKernelSharding(const Sharding& s, const hlo::ConvDims& cd) {
  std::vector<int64_t> others;
  for (int64_t d = 0; d < s.TiledDataRank(); ++d) {
    if (d != cd.out_feature) others.push_back(d);
  }
  const Sharding features = ReplicateDims(s, others);
  if (!features.IsTiled()) return features;
  std::vector<int64_t> perm(static_cast<size_t>(features.tile_assignment().num_dims()));
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
  perm[cd.rhs_output_feature] = cd.out_feature;
  perm[cd.rhs_input_feature] = cd.out_batch;
  for (size_t k = 0; k < cd.rhs_spatial.size(); ++k) perm[cd.rhs_spatial[k]] = cd.out_spatial[k];
  return Sharding::Tiled(features.tile_assignment().Transposed(perm), features.subgroup_types());
}

// A convolution split along a spatial dim with a real window: each block
// of the result reads a window of the input (ConvAccess). The output
// feature stays whole (the kernel is whole on every device), unless the
// convolution has feature groups and the split takes whole groups: then
// the kernel is split along them too. The batch stays whole under batch
// groups (its blocks would not map to the input's).
std::optional<HaloPlan> PlanConvolution(const Instruction& inst, const Sharding& s,
                                        std::vector<int64_t>& sends) {
  absl::StatusOr<hlo::ConvDims> cd = hlo::GetConvDims(inst);
  if (!cd.ok() || (cd->batch_group_count > 1 && s.TileCount(cd->out_batch) > 1)) {
    return std::nullopt;
  }
  const int64_t feature_tiles = s.TileCount(cd->out_feature);
  const bool grouped_split = cd->feature_group_count > 1 && cd->batch_group_count == 1 &&
                             cd->feature_group_count % feature_tiles == 0;
  if (feature_tiles > 1 && !grouped_split) return std::nullopt;
  const Sharding input = ConvInputSharding(s, *cd);
  const Shape& in = inst.operand(0)->shape();
  HaloPlan plan;
  for (size_t k = 0; k < cd->window.size(); ++k) {
    const int64_t od = cd->out_spatial[k], d = cd->lhs_spatial[k], n = s.TileCount(od);
    if (n <= 1 || Pointwise(cd->window[k])) continue;
    const int64_t N = in.dim(d), M = inst.shape().dim(od), t = CeilDiv(N, n), u = CeilDiv(M, n);
    if (t == 0 || u == 0) return std::nullopt;
    std::optional<ConvHalo> h = ConvAccess(cd->window[k], N, M, n, u);
    if (!h) return std::nullopt;
    plan.dims.push_back(PlanDim(input, in, d, n, t, u, h->access, sends));
  }
  plan.operand_shardings = {
      input, feature_tiles > 1 ? GroupedKernelSharding(s, *cd) : Sharding::Replicated()};
  return plan;
}

// The input's windows fetched dim by dim, positions outside the input
// zeroed, then the convolution with the local padding ConvAccess gives
// (none without base dilation) on those dims.
absl::StatusOr<Instruction*> LowerConvolution(LocalBuilder& b, const Instruction& inst,
                                              const std::vector<Instruction*>& operands,
                                              const Sharding& s, const HaloPlan& plan,
                                              const EmitLocalOp& emit) {
  ASSIGN_OR_RETURN(hlo::ConvDims cd, hlo::GetConvDims(inst));
  if (!emit) {
    return absl::InternalError(absl::StrCat("halo exchange: no emitter for ", inst.Describe()));
  }
  const Shape& in = inst.operand(0)->shape();
  hlo::IntListList window = inst.attr_int_lists("window");
  Instruction* x = operands[0];
  for (const HaloDim& h : plan.dims) {
    if (x->shape().dim(h.dim) != h.operand_tile) {
      return absl::InternalError(absl::StrCat("halo exchange: local input dim ", h.dim, " has ",
                                              x->shape().dim(h.dim), " elements, expected ",
                                              h.operand_tile, ", in ", inst.Describe()));
    }
    x = MaskOutside(b, FetchWindow(b, x, h), h, in.dim(h.dim), b.ScalarConstant(in.type(), 0));
    const size_t k = static_cast<size_t>(
        std::find(cd.lhs_spatial.begin(), cd.lhs_spatial.end(), h.dim) - cd.lhs_spatial.begin());
    const int64_t n = s.TileCount(cd.out_spatial[k]);
    std::optional<ConvHalo> local = ConvAccess(cd.window[k], in.dim(h.dim),
                                               inst.shape().dim(cd.out_spatial[k]), n,
                                               h.result_tile);
    if (!local) {
      return absl::InternalError(absl::StrCat("halo exchange: no window for ", inst.Describe()));
    }
    window[k][2] = local->pad_lo;
    window[k][3] = local->pad_hi;
  }
  Instruction* conv = emit({x, operands[1]}, s.ShardShape(inst.shape()));
  conv->set_attr("window", std::move(window));
  // Split along whole feature groups (PlanConvolution): this device's share.
  if (const int64_t tiles = s.TileCount(cd.out_feature); tiles > 1) {
    conv->set_attr("feature_group_count", cd.feature_group_count / tiles);
  }
  return conv;
}

}  // namespace

std::optional<HaloPlan> PlanHalo(const Instruction& inst, const Sharding& s) {
  const Opcode op = inst.opcode();
  if (op != Opcode::kSlice && op != Opcode::kPad && op != Opcode::kReverse &&
      op != Opcode::kReduceWindow && op != Opcode::kConcatenate && op != Opcode::kConvolution) {
    return std::nullopt;
  }
  if (!s.IsTiled() || s.HasManualSubgroup() || !inst.shape().is_array()) return std::nullopt;
  // Variadic reduce-windows (tuple results) are left to the default plans.
  if (op == Opcode::kReduceWindow &&
      (inst.operand_count() != 2 || !ReducerIdentity(inst).has_value())) {
    return std::nullopt;
  }
  const Shape& in = inst.operand(0)->shape();
  int64_t devices = 0;
  for (int64_t id : s.tile_assignment().devices()) devices = std::max(devices, id + 1);
  std::vector<int64_t> sends(static_cast<size_t>(devices), 0);
  std::optional<HaloPlan> plan;
  if (op == Opcode::kConcatenate) {
    plan = PlanConcatenate(inst, s, sends);
    if (plan) plan->operand_shardings.assign(static_cast<size_t>(inst.operand_count()), s);
  } else if (op == Opcode::kConvolution) {
    plan = PlanConvolution(inst, s, sends);
  } else {
    plan.emplace();
    plan->operand_shardings.assign(static_cast<size_t>(inst.operand_count()),
                                   Sharding::Replicated());
    plan->operand_shardings[0] = s;
    for (int64_t d = 0; d < in.rank(); ++d) {
      const int64_t n = s.TileCount(d);
      if (n <= 1) continue;
      const int64_t t = CeilDiv(in.dim(d), n), u = CeilDiv(inst.shape().dim(d), n);
      if (t == 0 || u == 0) return std::nullopt;
      std::optional<DimAccess> a = Access(inst, d, n, t, u);
      if (!a) return std::nullopt;
      if (!a->changed) continue;
      plan->dims.push_back(PlanDim(s, in, d, n, t, u, *a, sends));
    }
  }
  if (!plan || plan->dims.empty()) return std::nullopt;
  for (int64_t k : sends) plan->bytes_sent = std::max(plan->bytes_sent, k);
  return plan;
}

absl::StatusOr<Instruction*> LowerHalo(LocalBuilder& b, const Instruction& inst,
                                       const std::vector<Instruction*>& operands,
                                       const Sharding& s, const HaloPlan& plan,
                                       hlo::Computation* to_apply, const EmitLocalOp& emit) {
  if (inst.opcode() == Opcode::kConvolution) {
    return LowerConvolution(b, inst, operands, s, plan, emit);
  }
  if (inst.opcode() == Opcode::kConcatenate) {
    // Each position of a block from the operand whose rows hold it.
    Instruction* x = nullptr;
    for (size_t k = 0; k < plan.dims.size(); ++k) {
      const HaloDim& h = plan.dims[k];
      Instruction* w = FetchWindow(b, operands[k], h);
      x = x == nullptr ? w : MaskOutside(b, w, h, inst.operand(k)->shape().dim(h.dim), x);
    }
    return x;
  }
  Instruction* x = operands[0];
  const Shape& in = inst.operand(0)->shape();
  const int64_t rank = in.rank();
  std::vector<bool> halo(static_cast<size_t>(rank), false);
  for (const HaloDim& h : plan.dims) halo[h.dim] = true;
  // 1. The op along the dims that are not split (split dims it leaves
  //    alone are whole local dims).
  std::vector<int64_t> dims = x->shape().dims();
  switch (inst.opcode()) {
    case Opcode::kSlice: {
      hlo::IntListList spec = inst.attr_int_lists("slice");
      bool identity = true;
      for (int64_t d = 0; d < rank; ++d) {
        if (halo[d] || s.TileCount(d) > 1) spec[d] = {0, dims[d], 1};
        const int64_t stride = spec[d].size() > 2 ? spec[d][2] : 1;
        identity &= spec[d][0] == 0 && spec[d][1] == dims[d] && stride == 1;
        dims[d] = CeilDiv(spec[d][1] - spec[d][0], stride);
      }
      if (!identity) {
        auto c = Instruction::Create(Opcode::kSlice, b.FreshName(inst.name()),
                                     Shape(in.type(), dims), {x});
        c->set_attr("slice", std::move(spec));
        x = b.Add(std::move(c));
      }
      break;
    }
    case Opcode::kPad: {
      hlo::IntListList spec = inst.attr_int_lists("padding");
      bool identity = true;
      for (int64_t d = 0; d < rank; ++d) {
        if (halo[d] || s.TileCount(d) > 1) spec[d] = {0, 0, 0};
        const int64_t interior = spec[d].size() > 2 ? spec[d][2] : 0;
        identity &= spec[d][0] == 0 && spec[d][1] == 0 && interior == 0;
        dims[d] += spec[d][0] + spec[d][1] + interior * std::max<int64_t>(dims[d] - 1, 0);
      }
      if (!identity) {
        auto c = Instruction::Create(Opcode::kPad, b.FreshName(inst.name()), Shape(in.type(), dims),
                                     {x, operands[1]});
        c->set_attr("padding", std::move(spec));
        x = b.Add(std::move(c));
      }
      break;
    }
    case Opcode::kReverse: {
      hlo::IntList keep;
      for (int64_t d : inst.attr_ints("dimensions"))
        if (!halo[d]) keep.push_back(d);
      if (!keep.empty()) {
        auto c = Instruction::Create(Opcode::kReverse, b.FreshName(inst.name()), x->shape(), {x});
        c->set_attr("dimensions", std::move(keep));
        x = b.Add(std::move(c));
      }
      break;
    }
    case Opcode::kReduceWindow:
      // Not separable by dims (its init value would enter once per pass):
      // one local reduce-window after every window is fetched.
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("no halo exchange for ", inst.Describe()));
  }
  // 2. Each split dim the op changes: fetch the window, apply the op to it.
  for (const HaloDim& h : plan.dims) {
    if (x->shape().dim(h.dim) != h.operand_tile) {
      return absl::InternalError(absl::StrCat("halo exchange: local dim ", h.dim, " has ",
                                              x->shape().dim(h.dim), " elements, expected ",
                                              h.operand_tile, ", in ", inst.Describe()));
    }
    Instruction* w = FetchWindow(b, x, h);
    std::vector<int64_t> out = w->shape().dims();
    out[h.dim] = h.result_tile;
    switch (inst.opcode()) {
      case Opcode::kSlice: {
        const std::vector<int64_t>& spec = inst.attr_int_lists("slice")[h.dim];
        const int64_t stride = spec.size() > 2 ? spec[2] : 1;
        if (stride == 1) {
          x = w;
          break;
        }
        hlo::IntListList strided;
        for (int64_t d = 0; d < rank; ++d)
          strided.push_back(d == h.dim ? std::vector<int64_t>{0, h.window, stride}
                                       : std::vector<int64_t>{0, w->shape().dim(d), 1});
        auto c = Instruction::Create(Opcode::kSlice, b.FreshName("halo.slice"),
                                     Shape(in.type(), out), {w});
        c->set_attr("slice", std::move(strided));
        x = b.Add(std::move(c));
        break;
      }
      case Opcode::kPad: {
        // Window positions outside the operand take the pad value.
        x = MaskOutside(b, w, h, in.dim(h.dim), operands[1]);
        break;
      }
      case Opcode::kReduceWindow: {
        // Positions outside the operand hold the reducer's identity (the
        // reference skips padding); the window op runs once, after the
        // last dim.
        x = MaskOutside(b, w, h, in.dim(h.dim),
                        b.ScalarConstant(in.type(), *ReducerIdentity(inst)));
        break;
      }
      default: {  // reverse
        auto c = Instruction::Create(Opcode::kReverse, b.FreshName("halo.reverse"), w->shape(), {w});
        c->set_attr("dimensions", hlo::IntList{h.dim});
        x = b.Add(std::move(c));
        break;
      }
    }
  }
  if (inst.opcode() == Opcode::kReduceWindow) {
    // The fetched windows start at the first position a block reads, with
    // out-of-operand positions holding the init value: no padding left.
    hlo::IntListList window = inst.attr_int_lists("window");
    std::vector<int64_t> out = x->shape().dims();
    for (int64_t d = 0; d < rank; ++d) {
      std::vector<int64_t>& w = window[static_cast<size_t>(d)];
      if (halo[d]) {
        w[2] = w[3] = 0;
      } else if (s.TileCount(d) > 1) {
        continue;  // split, window trivial: the local dim as it is
      }
      out[d] = (x->shape().dim(d) + w[2] + w[3] - w[0]) / w[1] + 1;
    }
    for (const HaloDim& h : plan.dims) out[h.dim] = h.result_tile;
    auto c = Instruction::Create(Opcode::kReduceWindow, b.FreshName(inst.name()),
                                 Shape(inst.shape().type(), out), {x, operands[1]});
    c->set_attr("window", std::move(window));
    if (to_apply == nullptr) {
      return absl::InternalError(absl::StrCat("halo exchange: no reducer for ", inst.Describe()));
    }
    c->set_attr("to_apply", to_apply);
    x = b.Add(std::move(c));
  }
  return x;
}

}  // namespace sharc::spmd
