#include "spmd/partition/halo.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "spmd/partition/reshard.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::Sharding;

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

struct DimAccess {
  bool changed = false;
  // Device with tile index i along the dim: where its window starts, and
  // the operand range its valid result elements read ([lo, hi), empty if
  // lo >= hi).
  std::vector<int64_t> start, used_lo, used_hi;
  int64_t window = 0;
};

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
    for (size_t k = 0; k < rounds.size(); ++k) {
      std::sort(rounds[k].begin(), rounds[k].end());
      Instruction* received = b.CollectivePermute(x, rounds[k]);
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

}  // namespace

std::optional<HaloPlan> PlanHalo(const Instruction& inst, const Sharding& s) {
  const Opcode op = inst.opcode();
  if (op != Opcode::kSlice && op != Opcode::kPad && op != Opcode::kReverse) return std::nullopt;
  if (!s.IsTiled() || s.HasManualSubgroup() || !inst.shape().is_array()) return std::nullopt;
  const Shape& in = inst.operand(0)->shape();
  int64_t devices = 0;
  for (int64_t id : s.tile_assignment().devices()) devices = std::max(devices, id + 1);
  HaloPlan plan;
  std::vector<int64_t> sends(static_cast<size_t>(devices), 0);
  for (int64_t d = 0; d < in.rank(); ++d) {
    const int64_t n = s.TileCount(d);
    if (n <= 1) continue;
    const int64_t t = CeilDiv(in.dim(d), n), u = CeilDiv(inst.shape().dim(d), n);
    if (t == 0 || u == 0) return std::nullopt;
    std::optional<DimAccess> a = Access(inst, d, n, t, u);
    if (!a) return std::nullopt;
    if (!a->changed) continue;
    HaloDim h;
    h.dim = d;
    h.operand_tile = t;
    h.result_tile = u;
    h.window = a->window;
    h.start.assign(static_cast<size_t>(devices), 0);
    h.source.assign(static_cast<size_t>(devices), {});
    const std::vector<std::vector<int64_t>> groups = GroupsAlongDims(s, {d});
    for (const auto& group : groups) {
      for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
        const int64_t start = a->start[i];
        const int64_t q = FloorDiv(start, t);
        h.tiles = std::max(h.tiles, FloorDiv(start + h.window - 1, t) - q + 1);
      }
    }
    for (const auto& group : groups) {
      for (int64_t i = 0; i < static_cast<int64_t>(group.size()); ++i) {
        const int64_t p = group[i];
        const int64_t start = a->start[i], q = FloorDiv(start, t);
        h.start[p] = start;
        for (int64_t r = 0; r < h.tiles; ++r) {
          const int64_t j = q + r;
          const bool needed = j >= 0 && j < n && a->used_lo[i] < a->used_hi[i] &&
                              std::max(j * t, a->used_lo[i]) < std::min((j + 1) * t, a->used_hi[i]);
          const int64_t src = needed ? group[j] : -1;
          h.source[p].push_back(src);
          if (src >= 0 && src != p) ++sends[src];
        }
      }
    }
    plan.dims.push_back(std::move(h));
  }
  if (plan.dims.empty()) return std::nullopt;
  int64_t most = 0;
  for (int64_t k : sends) most = std::max(most, k);
  plan.bytes_sent = most * s.ShardShape(in).byte_size();
  return plan;
}

absl::StatusOr<Instruction*> LowerHalo(LocalBuilder& b, const Instruction& inst,
                                       const std::vector<Instruction*>& operands,
                                       const Sharding& s, const HaloPlan& plan) {
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
        Shape index_shape(PrimitiveType::kS32, w->shape().dims());
        auto iota = Instruction::Create(Opcode::kIota, b.FreshName("iota"), index_shape);
        iota->set_attr("iota_dimension", h.dim);
        Instruction* idx = b.Add(std::move(iota));
        Instruction* start = b.Broadcast(
            b.PerDeviceValue(Table(h.start, b.num_devices()), "halo.start"), index_shape, {});
        Instruction* global = b.Add(Instruction::Create(Opcode::kAdd, b.FreshName("add"),
                                                        index_shape, {idx, start}));
        Instruction* ge = Compare(b, global, b.Broadcast(b.ConstantS32(0), index_shape, {}), "GE");
        Instruction* lt =
            Compare(b, global, b.Broadcast(b.ConstantS32(in.dim(h.dim)), index_shape, {}), "LT");
        Instruction* inside = b.Add(Instruction::Create(
            Opcode::kAnd, b.FreshName("and"), Shape(PrimitiveType::kPred, w->shape().dims()),
            {ge, lt}));
        x = Select(b, inside, w, b.Broadcast(operands[1], w->shape(), {}));
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
  return x;
}

}  // namespace sharc::spmd
