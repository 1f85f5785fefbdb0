// Transpose rules of the data-movement ops: each moves cotangents back the
// way the op moved values (broadcast <-> sum, slice <-> pad, concatenate ->
// slices, reshape/transpose/reverse -> their inverses).
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

std::vector<Cotangent> Only(Instruction* ct, int64_t operands = 1) {
  std::vector<Cotangent> out(static_cast<size_t>(operands));
  out[0] = Cotangent::Of(ct);
  return out;
}

Instruction* SliceOf(Emitter& e, Instruction* x, const std::vector<int64_t>& start,
                     const std::vector<int64_t>& limit, const std::vector<int64_t>& stride) {
  hlo::IntListList spec;
  std::vector<int64_t> dims;
  for (size_t d = 0; d < start.size(); ++d) {
    spec.push_back({start[d], limit[d], stride[d]});
    dims.push_back((limit[d] - start[d] + stride[d] - 1) / stride[d]);
  }
  return e.Add(Opcode::kSlice, Shape(x->shape().type(), std::move(dims)), {x},
               {{"slice", std::move(spec)}});
}

}  // namespace

void RegisterShapeTransposeRules(TransposeRuleRegistry& r) {
  // broadcast -> sum over the new dims.
  r.Register(Opcode::kBroadcast, [](const Instruction& inst, const Cotangent& ct,
                                    TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    const IntList& dims = inst.attr_ints("dimensions");
    const Shape& operand = inst.operand(0)->shape();
    IntList summed;
    for (int64_t d = 0; d < inst.shape().rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) summed.push_back(d);
    }
    Instruction* sum = ReduceSum(e, ct.value, summed);
    // The kept dims come out in increasing order; put them in operand order.
    IntList sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    IntList perm;
    for (int64_t d : dims) {
      perm.push_back(std::find(sorted.begin(), sorted.end(), d) - sorted.begin());
    }
    return Only(Reshape(e, Transpose(e, sum, perm), operand.dims()));
  });
  r.Register(Opcode::kReshape, [](const Instruction& inst, const Cotangent& ct,
                                  TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    return Only(Reshape(ctx.emitter(), ct.value, inst.operand(0)->shape().dims()));
  });
  r.Register(Opcode::kTranspose, [](const Instruction& inst, const Cotangent& ct,
                                    TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    const IntList& perm = inst.attr_ints("dimensions");
    IntList inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    return Only(Transpose(ctx.emitter(), ct.value, inverse));
  });
  r.Register(Opcode::kReverse, [](const Instruction& inst, const Cotangent& ct,
                                  TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    return Only(ctx.emitter().Add(Opcode::kReverse, inst.shape(), {ct.value},
                                  {{"dimensions", inst.attr_ints("dimensions")}}));
  });
  // slice -> pad with zeros (interior padding undoes the stride).
  r.Register(Opcode::kSlice, [](const Instruction& inst, const Cotangent& ct,
                                TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    const Shape& operand = inst.operand(0)->shape();
    const hlo::IntListList& spec = inst.attr_int_lists("slice");
    hlo::IntListList padding;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      const std::vector<int64_t>& s = spec[static_cast<size_t>(d)];
      const int64_t start = s[0];
      const int64_t stride = s.size() > 2 ? s[2] : 1;
      const int64_t n = inst.shape().dim(d);
      if (n == 0) {
        padding.push_back({0, operand.dim(d), 0});
      } else {
        const int64_t last = start + (n - 1) * stride;
        padding.push_back({start, operand.dim(d) - last - 1, stride - 1});
      }
    }
    Instruction* zero = ScalarOf(e, operand.type(), 0.0);
    return Only(e.Add(Opcode::kPad, operand, {ct.value, zero}, {{"padding", std::move(padding)}}));
  });
  // pad -> slice out the operand; the padding value gets the rest. Negative
  // edge padding cropped elements away: their cotangent is zero, so the
  // cotangent is first padded back out to the uncropped size.
  r.Register(Opcode::kPad, [](const Instruction& inst, const Cotangent& ct,
                              TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    Emitter& e = ctx.emitter();
    const Shape& operand = inst.operand(0)->shape();
    const hlo::IntListList& padding = inst.attr_int_lists("padding");
    std::vector<int64_t> start, limit, stride;
    hlo::IntListList uncrop;
    std::vector<int64_t> uncropped_dims;
    bool cropped = false;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      const std::vector<int64_t>& p = padding[static_cast<size_t>(d)];
      const int64_t lo = std::max<int64_t>(p[0], 0);
      const int64_t hi = std::max<int64_t>(p[1], 0);
      cropped |= p[0] < 0 || p[1] < 0;
      uncrop.push_back({lo - p[0], hi - p[1], 0});
      uncropped_dims.push_back(inst.shape().dim(d) + (lo - p[0]) + (hi - p[1]));
      start.push_back(lo);
      stride.push_back(p[2] + 1);
      limit.push_back(operand.dim(d) == 0 ? lo : lo + (operand.dim(d) - 1) * (p[2] + 1) + 1);
    }
    Instruction* full = ct.value;
    if (cropped) {
      full = e.Add(Opcode::kPad, Shape(operand.type(), uncropped_dims),
                   {ct.value, ScalarOf(e, operand.type(), 0.0)}, {{"padding", std::move(uncrop)}});
    }
    std::vector<Cotangent> out = NoCotangents(inst);
    Instruction* inner = SliceOf(e, full, start, limit, stride);
    if (ctx.IsLinear(inst.operand(0))) out[0] = Cotangent::Of(inner);
    if (ctx.IsLinear(inst.operand(1))) {
      IntList all(static_cast<size_t>(inst.shape().rank()));
      std::iota(all.begin(), all.end(), 0);
      IntList inner_all(static_cast<size_t>(operand.rank()));
      std::iota(inner_all.begin(), inner_all.end(), 0);
      out[1] = Cotangent::Of(Sub(e, ReduceSum(e, ct.value, all), ReduceSum(e, inner, inner_all)));
    }
    return out;
  });
  // concatenate -> the matching slice for each operand.
  r.Register(Opcode::kConcatenate, [](const Instruction& inst, const Cotangent& ct,
                                      TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    const int64_t dim = inst.attr_ints("dimensions").at(0);
    std::vector<Cotangent> out = NoCotangents(inst);
    int64_t offset = 0;
    const int64_t rank = inst.shape().rank();
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const Shape& s = inst.operand(i)->shape();
      if (ctx.IsLinear(inst.operand(i))) {
        std::vector<int64_t> start(static_cast<size_t>(rank), 0);
        std::vector<int64_t> limit = inst.shape().dims();
        std::vector<int64_t> stride(static_cast<size_t>(rank), 1);
        start[static_cast<size_t>(dim)] = offset;
        limit[static_cast<size_t>(dim)] = offset + s.dim(dim);
        out[static_cast<size_t>(i)] =
            Cotangent::Of(SliceOf(ctx.emitter(), ct.value, start, limit, stride));
      }
      offset += s.dim(dim);
    }
    return out;
  });
}

}  // namespace sharc::autodiff
