// select-and-scatter (the gradient of a max- or min-pool) as a Halide
// kernel, in two stages:
//
//   %g = f32[4,6] select-and-scatter(f32[4,6] %x, f32[2,3] %ct, f32[] %zero),
//        window={size=2x2 stride=2x2}, select=%ge, scatter=%add
//
//   selected(w) = the offset, in its window, of the element `select` picks
//                 for window w: the first valid element, replaced by each
//                 later one for which select(picked, candidate) is false
//                 (the interpreter's fold, in the same row-major order);
//   result(x)   = init, folded by `scatter` with ct(w) for every window w
//                 that holds x at offset k and picked k.
//
// result gathers instead of scattering: x visits its windows' offsets last
// first, which visits the windows in source order, so each element combines
// the same values in the same order as the interpreter and the results
// agree bit for bit. Windows with dilation stay on the interpreter.
#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "codegen/reducer.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

struct PoolWindow {
  int64_t size, stride, pad_lo;
};

std::vector<PoolWindow> PoolWindows(const hlo::Instruction& inst) {
  std::vector<PoolWindow> dims;
  for (const std::vector<int64_t>& w : inst.attr_int_lists("window")) {
    dims.push_back({w[0], w[1], w[2]});
  }
  return dims;
}

absl::Status SupportsSelectAndScatter(const hlo::Instruction& inst) {
  for (const std::vector<int64_t>& w : inst.attr_int_lists("window")) {
    if (w.size() >= 6 && (w[4] != 1 || w[5] != 1)) {
      return LoweringError(inst, "select-and-scatter with a dilated window has no Halide lowering "
                                 "(the default backend runs it on the interpreter's kernels)");
    }
  }
  RETURN_IF_ERROR(CheckReducerLowerable(inst, *inst.attr_computation("select")));
  return CheckReducerLowerable(inst, *inst.attr_computation("scatter"));
}

// An RDom over the window, the last window dim innermost (row-major order).
Halide::RDom WindowDom(const hlo::Instruction& inst, const std::vector<PoolWindow>& window,
                       const std::string& name) {
  std::vector<Halide::Range> ranges;
  for (size_t d = window.size(); d-- > 0;) {
    ranges.emplace_back(0, static_cast<int>(window[d].size));
  }
  if (ranges.empty()) ranges.emplace_back(0, 1);
  return Halide::RDom(ranges, HalideName(name, inst));
}

// The row-major offset within the window of per-dim offsets `k` (HLO order).
Expr WindowOffset(const std::vector<PoolWindow>& window, const std::vector<Expr>& k) {
  Expr offset = 0;
  for (size_t d = 0; d < window.size(); ++d) {
    offset = offset * static_cast<int>(window[d].size) + k[d];
  }
  return offset;
}

absl::StatusOr<Lowered> LowerSelectAndScatter(const hlo::Instruction& inst,
                                              absl::Span<const LoweredValue> ops) {
  const hlo::Shape& operand = ops[0].shape;
  const hlo::Shape& source = ops[1].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  const std::vector<PoolWindow> window = PoolWindows(inst);
  const int64_t rank = operand.rank();
  const Expr init = Call(ops[2].func, {});

  Lowered out;
  std::vector<Halide::Var> xs = HloVars(rank);
  out.func = Halide::Func(HalideName("select_and_scatter", inst));
  Define(out.func, xs, init);
  if (operand.num_elements() == 0 || source.num_elements() == 0) return out;

  // Stage 1: the picked offset of every window (-1: the window holds no
  // element). Only the offset is stored and the picked value read back from
  // the operand: a Tuple of both would let Halide store one element before
  // computing the other from it.
  std::vector<Halide::Var> ws = HloVars(rank);
  Halide::Func selected(HalideName("selected", inst));
  std::vector<Expr> w_pure = AsExprs(ws);
  std::vector<Expr> w_lhs(w_pure.rbegin(), w_pure.rend());
  selected(w_lhs) = Expr(-1);
  Halide::RDom r = WindowDom(inst, window, "window");
  const Expr picked_offset = selected(w_lhs);
  std::vector<Expr> k, at, picked_at;
  Expr valid = const_true();
  int64_t inner_positions = 1;  // window positions per step of dim d
  for (int64_t d = rank; d-- > 0;) {
    const PoolWindow& w = window[static_cast<size_t>(d)];
    const Expr kd = r[static_cast<int>(rank - 1 - d)];
    const Expr start = ws[static_cast<size_t>(d)] * static_cast<int>(w.stride) -
                       static_cast<int>(w.pad_lo);
    const Expr pos = start + kd;
    valid = valid && pos >= 0 && pos < static_cast<int>(operand.dim(d));
    k.insert(k.begin(), kd);
    at.insert(at.begin(), ClampIndex(pos, operand.dim(d)));
    const Expr picked_kd =
        (Halide::max(picked_offset, 0) / static_cast<int>(inner_positions)) % static_cast<int>(w.size);
    picked_at.insert(picked_at.begin(), ClampIndex(start + picked_kd, operand.dim(d)));
    inner_positions *= w.size;
  }
  const Expr picked_value = Call(ops[0].func, picked_at);
  const Expr candidate = Call(ops[0].func, at);
  ASSIGN_OR_RETURN(std::vector<Expr> keep,
                   ApplyReducer(inst, *inst.attr_computation("select"), {picked_value, candidate}));
  const Expr take = valid && (picked_offset < 0 || !keep[0]);
  selected(w_lhs) = Halide::select(take, WindowOffset(window, k), picked_offset);

  // Stage 2: each element gathers from the windows that picked it.
  Halide::RDom q = WindowDom(inst, window, "offset");
  std::vector<Expr> kq, from;
  Expr holds = const_true();
  for (int64_t d = 0; d < rank; ++d) {
    const PoolWindow& w = window[static_cast<size_t>(d)];
    // Offsets last first: the windows holding x come in source order.
    kq.push_back(static_cast<int>(w.size - 1) - q[static_cast<int>(rank - 1 - d)]);
    Expr num = xs[static_cast<size_t>(d)] + static_cast<int>(w.pad_lo) - kq.back();
    Expr wd = num / static_cast<int>(w.stride);
    holds = holds && num >= 0 && num % static_cast<int>(w.stride) == 0 &&
            wd < static_cast<int>(source.dim(d));
    from.push_back(ClampIndex(wd, source.dim(d)));
  }
  std::vector<Expr> from_lhs(from.rbegin(), from.rend());
  const Expr hit = holds && selected(from_lhs) == WindowOffset(window, kq);
  std::vector<Expr> x_pure = AsExprs(xs);
  std::vector<Expr> x_lhs(x_pure.rbegin(), x_pure.rend());
  const Expr acc = out.func(x_lhs);
  const Expr ct = Call(ops[1].func, from);
  const hlo::Computation& scatter = *inst.attr_computation("scatter");
  Expr combined;
  if (std::optional<hlo::Opcode> op = PlainBinaryReducer(scatter)) {
    combined = ToStorage(Combine(*op, ToCompute(acc, t), ToCompute(ct, t)), t);
  } else {
    ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, scatter, {acc, ct}));
    combined = v[0];
  }
  out.func(x_lhs) = Halide::select(hit, combined, acc);
  out.kind = LoweringKind::kReduction;
  out.helpers = {selected};
  const hlo::Shape result = inst.shape();
  const hlo::Shape offsets(hlo::PrimitiveType::kS32, source.dims());
  out.schedule = [selected, result, offsets](Halide::Func f) mutable {
    // Each stage computes every element once, its rows in parallel.
    auto schedule = [](Halide::Func g, const hlo::Shape& shape) {
      g.compute_root();
      std::vector<Halide::Var> args = g.args();
      const int width = VectorLanes(shape.type());
      if (shape.dim(shape.rank() - 1) >= width) {
        g.vectorize(args[0], width);
        g.update().vectorize(args[0], width);
      }
      if (shape.rank() >= 2 && shape.num_elements() >= 64) {
        g.parallel(args.back());
        g.update().parallel(args.back());
      }
    };
    if (result.rank() == 0) {
      selected.compute_root();
      f.compute_root();
      return;
    }
    schedule(selected, offsets);
    schedule(f, result);
  };
  return out;
}

}  // namespace

void RegisterSelectAndScatterLowering(LoweringTable& table) {
  table.Add(hlo::Opcode::kSelectAndScatter, LowerSelectAndScatter, SupportsSelectAndScatter);
}

}  // namespace sharc::codegen
