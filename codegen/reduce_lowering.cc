// Halide lowerings of reduce and reduce-window whose reducer is one plain
// binary op of its two parameters (add, multiply, maximum, minimum, and, or,
// xor). Each step rounds to the storage type, as the interpreter's fast path
// does, so f16/bf16 results agree step for step. A reduce whose reducer is a
// whole computation (variadic argmax and friends) folds in the interpreter's
// order through ApplyReducer, as a Tuple-valued Func for several inputs;
// so does reduce-window, window by window, padding and dilation holes
// skipped.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/cpu_tuning.h"
#include "codegen/lowering.h"
#include "codegen/page_walk.h"
#include "codegen/reducer.h"
#include "codegen/row_reduction.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

// The plain binary op of a one-input reduce or reduce-window.
absl::StatusOr<hlo::Opcode> PlainReducer(const hlo::Instruction& inst) {
  if (inst.operand_count() != 2) return LoweringError(inst, "has several inputs");
  const hlo::Computation* reducer = inst.attr_computation("to_apply");
  if (reducer == nullptr) return LoweringError(inst, "has no reducer");
  std::optional<hlo::Opcode> op = PlainBinaryReducer(*reducer);
  if (!op) {
    return LoweringError(inst, "reducer '" + reducer->name() +
                                   "' is not one binary add/multiply/maximum/minimum/and/or/xor");
  }
  return *op;
}

// Elements per parallel task of a sum to a scalar: enough to pay for a
// task, few enough that a 4M-element sum still splits across the cores.
constexpr int64_t kSumTaskElements = int64_t{1} << 16;
constexpr int64_t kMaxSumTasks = 64;

// A long 1-d sum (to a scalar) is summed as 64 interleaved partial sums (one
// vector accumulator set, perf_anchors.md §3) and then combined: float sums
// of long rows are then not in the interpreter's order, as in XLA. Rows of
// a rank >= 2 input take row_reduction.h instead. A sum to a scalar is
// additionally cut into chunks summed in parallel.

void ScheduleLongRowSum(Halide::Func f, Halide::RDom r, const hlo::Shape& result,
                        hlo::PrimitiveType t) {
  // Fixed on every target, not the native width: 64 f32 partial sums are
  // 4 zmm or 8 ymm accumulators, enough adds in flight either way, and the
  // sum's order (hence its rounding) does not depend on the vector width.
  // It does depend on whether a chunk walks pages side by side, which is
  // the core's choice (CpuTuning::sums_walk_pages).
  const int lanes = t == hlo::PrimitiveType::kF32 ? 16 : 8;
  Halide::RVar rx(r[0]), rxo("rxo"), rxi("rxi");
  Halide::Var u("u");
  f.compute_root();
  std::vector<Halide::Var> args = f.args();
  if (args.empty()) {
    // A sum to one scalar has no output loop to parallelise: it is cut into
    // chunks, each summed as above by its own task, and the chunks' partial
    // sums are added at the end.
    int64_t elements = 1;
    for (int d = 0; d < r.dimensions(); ++d) elements *= *Halide::Internal::as_const_int(r[d].extent());
    const int64_t tasks = std::min(kMaxSumTasks, elements / kSumTaskElements);
    if (tasks >= 2) {
      Halide::Var c("chunk");
      Halide::RVar rc("rc"), rm("rm");
      int walk_steps = 0;  // > 0: the chunk's groups walk pages side by side
      Halide::Stage update = f.update();
      update.split(rx, rxo, rxi, lanes * 4);
      const int last = r.dimensions() - 1;
      const int64_t outer = *Halide::Internal::as_const_int(r[last].extent());
      if (last >= 1 && outer >= 2) {
        // Chunks of whole outer rows (about `tasks` of them).
        const int64_t chunks = std::min(tasks, outer);
        update.split(Halide::RVar(r[last]), rc, rm, static_cast<int>((outer + chunks - 1) / chunks));
      } else {
        // Chunks of the innermost dim's vector groups (the only dim longer
        // than 1 when the outer ones are 1).
        const int64_t inner = *Halide::Internal::as_const_int(r[0].extent());
        const int64_t groups = (inner + lanes * 4 - 1) / (lanes * 4);
        int64_t per = (groups + tasks - 1) / tasks;
        // Where the core reads side by side faster (cpu_tuning.h), a chunk
        // walks kInterleavedPages pages side by side, one group of each in
        // turn, as the elementwise schedule does: on Zen 3 a 64M-float sum
        // went from 18.9-19.3 ms to 14.9-16.2 ms on one thread, level with
        // a plain loop (BM_StreamReadSum); on Zen 4 front to back was 1.4x
        // faster. A group (64 f32 or 32 f64) is one page step, so chunks
        // are then whole groups of pages (the last one short).
        const int64_t group_bytes = lanes * 4 * hlo::ByteWidth(t);
        const int64_t steps = kPageBytes / kPageStepBytes;  // groups per page
        walk_steps = HostCpuTuning().sums_walk_pages && group_bytes == kPageStepBytes &&
                             per >= kInterleavedPages * steps
                         ? static_cast<int>(steps)
                         : 0;
        if (walk_steps > 0) {
          const int64_t quantum = kInterleavedPages * steps;
          per = (per + quantum - 1) / quantum * quantum;
        }
        update.split(rxo, rc, rm, static_cast<int>(per));
      }
      Halide::Func partial = update.rfactor({{rc, c}, {rxi, u}});
      partial.compute_root().vectorize(u, lanes).unroll(u);
      partial.update().parallel(c).vectorize(u, lanes).unroll(u);
      if (walk_steps > 0) {
        Halide::RVar group("group"), step("step"), pages("pages"), page("page");
        partial.update()
            .split(rm, group, step, walk_steps)
            .split(group, pages, page, kInterleavedPages)
            .reorder(u, page, step, pages, c);
      }
      return;
    }
  }
  Halide::Func partial = f.update().split(rx, rxo, rxi, lanes * 4).rfactor(rxi, u);
  if (!args.empty()) {
    partial.compute_at(f, args.back());
    if (result.num_elements() >= 2) f.parallel(args.back()).update().parallel(args.back());
  } else {
    partial.compute_root();
  }
  partial.vectorize(u, lanes).unroll(u);
  partial.update().vectorize(u, lanes).unroll(u);
}

// Where reduce's operand dim d is read from: a kept output var or an RDom
// dim (the last reduced dim innermost, as the interpreter visits them).
struct ReduceIndex {
  std::vector<Halide::Range> ranges;  // empty if nothing is reduced
  std::vector<int64_t> reduced_dims;  // HLO dim of each RDom dim
};

ReduceIndex GetReduceIndex(const hlo::Instruction& inst, const hlo::Shape& input) {
  std::vector<bool> reduced(static_cast<size_t>(input.rank()), false);
  for (int64_t d : inst.attr_ints("dimensions")) reduced[static_cast<size_t>(d)] = true;
  ReduceIndex ri;
  for (int64_t d = input.rank(); d-- > 0;) {
    if (!reduced[static_cast<size_t>(d)]) continue;
    ri.ranges.emplace_back(0, static_cast<int>(input.dim(d)));
    ri.reduced_dims.push_back(d);
  }
  return ri;
}

// reduce with any elementwise reducer over N inputs and N inits.
absl::StatusOr<Lowered> LowerComputationReduce(const hlo::Instruction& inst,
                                               absl::Span<const LoweredValue> ops) {
  const size_t n = ops.size() / 2;
  const hlo::Computation& reducer = *inst.attr_computation("to_apply");
  const hlo::Shape& input = ops[0].shape;
  const hlo::Shape& result = inst.shape().is_tuple() ? inst.shape().tuple_shape(0) : inst.shape();
  std::vector<Halide::Var> vars = HloVars(result.rank());
  std::vector<Expr> kept = AsExprs(vars);
  std::vector<Expr> lhs(kept.rbegin(), kept.rend());
  std::vector<Halide::Var> pure(vars.rbegin(), vars.rend());
  Lowered out;
  out.func = Halide::Func(HalideName("reduce", inst));
  // One input: a plain Func (Halide refuses [] on a single-valued Func).
  auto define = [&](const std::vector<Expr>& at, const std::vector<Expr>& v) {
    if (n == 1) {
      out.func(at) = v[0];
    } else {
      out.func(at) = Halide::Tuple(v);
    }
  };
  std::vector<Expr> inits;
  for (size_t k = 0; k < n; ++k) inits.push_back(Call(ops[n + k].func, {}));
  ReduceIndex ri = GetReduceIndex(inst, input);
  auto element = [&](const std::vector<Expr>& index) {
    std::vector<Expr> xs;
    for (size_t k = 0; k < n; ++k) xs.push_back(Call(ops[k].func, index));
    return xs;
  };
  if (ri.ranges.empty()) {
    // Nothing reduced: the reducer sees init and each element once.
    std::vector<Expr> args = inits;
    for (Expr& x : element(kept)) args.push_back(x);
    ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, reducer, args));
    define(std::vector<Expr>(pure.begin(), pure.end()), v);
    return out;
  }
  define(std::vector<Expr>(pure.begin(), pure.end()), inits);
  if (input.num_elements() == 0) return out;
  Halide::RDom r(ri.ranges, HalideName("r", inst));
  std::vector<Expr> index(static_cast<size_t>(input.rank()));
  std::vector<bool> is_reduced(static_cast<size_t>(input.rank()), false);
  for (size_t i = 0; i < ri.reduced_dims.size(); ++i) {
    index[static_cast<size_t>(ri.reduced_dims[i])] = r[static_cast<int>(i)];
    is_reduced[static_cast<size_t>(ri.reduced_dims[i])] = true;
  }
  for (int64_t d = 0, k = 0; d < input.rank(); ++d) {
    if (!is_reduced[static_cast<size_t>(d)]) index[static_cast<size_t>(d)] = kept[static_cast<size_t>(k++)];
  }
  if (n == 1) {
    std::vector<Expr> args = {out.func(lhs)};
    for (Expr& x : element(index)) args.push_back(x);
    ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, reducer, args));
    define(lhs, v);
    out.kind = LoweringKind::kReduction;
    return out;
  }
  // Several values: Halide 14 stores a Tuple update's elements one after
  // the other and, under StrictFloat, a later element may re-read an
  // element already overwritten in the same step (argmax then never moves
  // its index). So the fold alternates between two slots: step i reads
  // slot i%2 and writes slot 1-i%2, and nothing read is overwritten.
  Halide::Var slot("slot");
  Halide::Func state(HalideName("reduce_state", inst));
  std::vector<Expr> pure_slot = {slot};
  pure_slot.insert(pure_slot.end(), pure.begin(), pure.end());
  state(pure_slot) = Halide::Tuple(inits);
  Expr step = r[0];
  int64_t stride = 1;
  for (size_t i = 1; i < ri.ranges.size(); ++i) {
    stride *= input.dim(ri.reduced_dims[i - 1]);
    step = step + r[static_cast<int>(i)] * static_cast<int>(stride);
  }
  int64_t steps = 1;
  for (int64_t d : ri.reduced_dims) steps *= input.dim(d);
  auto at_slot = [&](const Expr& s, const std::vector<Expr>& where) {
    std::vector<Expr> a = {s};
    a.insert(a.end(), where.begin(), where.end());
    return a;
  };
  std::vector<Expr> args;
  for (size_t k = 0; k < n; ++k) args.push_back(state(at_slot(step % 2, lhs))[static_cast<int>(k)]);
  for (Expr& x : element(index)) args.push_back(x);
  ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, reducer, args));
  state(at_slot(1 - step % 2, lhs)) = Halide::Tuple(v);
  std::vector<Expr> final_values;
  const std::vector<Expr> pure_exprs(pure.begin(), pure.end());
  for (size_t k = 0; k < n; ++k) {
    final_values.push_back(state(at_slot(static_cast<int>(steps % 2), pure_exprs))[static_cast<int>(k)]);
  }
  out.func = Halide::Func(HalideName("reduce", inst));
  out.func(pure_exprs) = Halide::Tuple(final_values);
  out.kind = LoweringKind::kReduction;
  out.helpers = {state};
  const hlo::Shape shape = result;
  out.schedule = [state, shape](Halide::Func f) mutable {
    state.compute_root();
    f.compute_root();
    if (shape.rank() >= 1 && shape.num_elements() >= 64) {
      std::vector<Halide::Var> a = f.args();
      f.parallel(a.back());
    }
  };
  return out;
}

absl::StatusOr<Lowered> LowerReduce(const hlo::Instruction& inst,
                                    absl::Span<const LoweredValue> ops) {
  if (inst.operand_count() != 2 || !PlainBinaryReducer(*inst.attr_computation("to_apply"))) {
    return LowerComputationReduce(inst, ops);
  }
  ASSIGN_OR_RETURN(hlo::Opcode op, PlainReducer(inst));
  if (IsVectorizableRowReduction(inst, op)) return LowerRowReduction(inst, ops, op);
  const hlo::Shape& input = ops[0].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  std::vector<bool> reduced(static_cast<size_t>(input.rank()), false);
  for (int64_t d : dims) reduced[static_cast<size_t>(d)] = true;

  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("reduce", inst));
  Define(out.func, vars, Call(ops[1].func, {}));
  std::vector<Expr> kept = AsExprs(vars);
  // Halide's RDom lists the innermost variable first; the interpreter visits
  // reduced dims in row-major order, so the last reduced dim is innermost.
  std::vector<std::pair<Expr, Expr>> ranges;
  std::vector<int64_t> reduced_dims;
  for (int64_t d = input.rank(); d-- > 0;) {
    if (!reduced[static_cast<size_t>(d)]) continue;
    ranges.push_back({0, static_cast<int>(input.dim(d))});
    reduced_dims.push_back(d);
  }
  if (ranges.empty() || input.num_elements() == 0) {
    if (ranges.empty()) {
      // Nothing reduced: combine init with each element once (a fresh Func:
      // redefining the first would be a Halide update that hides it).
      Expr x = Call(ops[0].func, kept);
      out.func = Halide::Func(HalideName("reduce", inst));
      Define(out.func, vars,
             ToStorage(Combine(op, ToCompute(Call(ops[1].func, {}), t), ToCompute(x, t)), t));
    }
    out.kind = LoweringKind::kInline;
    return out;
  }
  std::vector<Halide::Range> rdom_ranges;
  for (auto& [lo, ext] : ranges) rdom_ranges.emplace_back(lo, ext);
  Halide::RDom r(rdom_ranges, HalideName("r", inst));
  std::vector<Expr> index(static_cast<size_t>(input.rank()));
  size_t k = 0;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) index[static_cast<size_t>(d)] = kept[k++];
  }
  for (size_t i = 0; i < reduced_dims.size(); ++i) {
    index[static_cast<size_t>(reduced_dims[i])] = r[static_cast<int>(i)];
  }
  Expr acc = Call(out.func, kept);
  Expr x = Call(ops[0].func, index);
  std::vector<Expr> lhs(kept.rbegin(), kept.rend());
  out.func(lhs) = ToStorage(Combine(op, ToCompute(acc, t), ToCompute(x, t)), t);
  out.kind = LoweringKind::kReduction;
  const int64_t inner = input.dim(input.rank() - 1);
  const hlo::Shape result = inst.shape();
  if (op == hlo::Opcode::kAdd && (t == hlo::PrimitiveType::kF32 || t == hlo::PrimitiveType::kF64) &&
      reduced[static_cast<size_t>(input.rank() - 1)] && inner >= kLongRow) {
    out.schedule = [r, result, t](Halide::Func f) { ScheduleLongRowSum(f, r, result, t); };
  }
  return out;
}

// Where window position r (RDom dims innermost first) of output element
// `vars` reads the input, and whether it holds an element: padding and
// base-dilation holes hold none and are skipped, as the interpreter does.
struct WindowIndex {
  std::vector<Expr> index;  // in HLO order, clamped into the input
  Expr valid;
};

WindowIndex GetWindowIndex(const hlo::Instruction& inst, const hlo::Shape& input,
                           const std::vector<Halide::Var>& vars, const Halide::RDom& r) {
  const hlo::IntListList& window = inst.attr_int_lists("window");
  WindowIndex wi;
  wi.valid = const_true();
  for (int64_t d = 0; d < input.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    const int64_t stride = w[1], pad_lo = w[2], base_dilation = w[4], window_dilation = w[5];
    Expr rd = r[static_cast<int>(input.rank() - 1 - d)];
    Expr pos = vars[static_cast<size_t>(d)] * static_cast<int>(stride) +
               rd * static_cast<int>(window_dilation) - static_cast<int>(pad_lo);
    Expr j = base_dilation == 1 ? pos : pos / static_cast<int>(base_dilation);
    Expr ok = pos >= 0 && j < static_cast<int>(input.dim(d));
    if (base_dilation != 1) ok = ok && pos % static_cast<int>(base_dilation) == 0;
    wi.valid = wi.valid && ok;
    wi.index.push_back(ClampIndex(j, input.dim(d)));
  }
  return wi;
}

// The window's RDom: the last window dim innermost, so each output element
// visits its window in row-major order (the interpreter's order). A rank-0
// input has a window of one position.
Halide::RDom WindowRDom(const hlo::Instruction& inst, int64_t rank) {
  const hlo::IntListList& window = inst.attr_int_lists("window");
  std::vector<Halide::Range> ranges;
  for (int64_t d = rank; d-- > 0;) {
    ranges.emplace_back(0, static_cast<int>(window[static_cast<size_t>(d)][0]));
  }
  if (ranges.empty()) ranges.emplace_back(0, 1);
  return Halide::RDom(ranges, HalideName("w", inst));
}

// reduce-window with a reducer that is a whole computation (composites such
// as add-then-clamp, argmax over windows) and/or several inputs: each output
// element folds its window, holes skipped, through ApplyReducer. Several
// values fold through two alternating slots (see LowerComputationReduce).
absl::StatusOr<Lowered> LowerComputationReduceWindow(const hlo::Instruction& inst,
                                                     absl::Span<const LoweredValue> ops) {
  const size_t n = ops.size() / 2;
  const hlo::Computation& reducer = *inst.attr_computation("to_apply");
  const hlo::Shape& input = ops[0].shape;
  const hlo::Shape result = inst.shape().is_tuple() ? inst.shape().tuple_shape(0) : inst.shape();
  std::vector<Halide::Var> vars = HloVars(result.rank());
  std::vector<Expr> kept = AsExprs(vars);
  std::vector<Expr> lhs(kept.rbegin(), kept.rend());
  const std::vector<Expr> pure(lhs);
  std::vector<Expr> inits;
  for (size_t k = 0; k < n; ++k) inits.push_back(Call(ops[n + k].func, {}));
  Lowered out;
  out.func = Halide::Func(HalideName("reduce_window", inst));
  if (n == 1) {
    out.func(pure) = inits[0];
  } else {
    out.func(pure) = Halide::Tuple(inits);
  }
  // No output, or no element in any window: the inits.
  if (result.num_elements() == 0 || input.num_elements() == 0) return out;

  Halide::RDom r = WindowRDom(inst, input.rank());
  WindowIndex wi = GetWindowIndex(inst, input, vars, r);
  std::vector<Expr> xs;
  for (size_t k = 0; k < n; ++k) xs.push_back(Call(ops[k].func, wi.index));
  if (n == 1) {
    Expr acc = out.func(lhs);
    ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, reducer, {acc, xs[0]}));
    out.func(lhs) = Halide::select(wi.valid, v[0], acc);
    out.kind = LoweringKind::kReduction;  // the generic reduction schedule
    return out;
  }
  // Step i of every window reads slot i%2 and writes slot 1-i%2 (the slot
  // is the outermost dim, so each slot is a dense array); holes copy.
  const hlo::IntListList& window = inst.attr_int_lists("window");
  Expr step = r[0];
  int64_t steps = 1, stride = 1;
  for (int64_t d = input.rank(); d-- > 0;) {
    const int64_t size = window[static_cast<size_t>(d)][0];
    const int i = static_cast<int>(input.rank() - 1 - d);
    if (i > 0) step = step + r[i] * static_cast<int>(stride);
    stride *= size;
    steps *= size;
  }
  Halide::Var slot("slot");
  Halide::Func state(HalideName("reduce_window_state", inst));
  auto at_slot = [](const std::vector<Expr>& where, const Expr& s) {
    std::vector<Expr> a = where;
    a.push_back(s);
    return a;
  };
  state(at_slot(pure, slot)) = Halide::Tuple(inits);
  std::vector<Expr> args, old;
  for (size_t k = 0; k < n; ++k) {
    old.push_back(state(at_slot(lhs, step % 2))[static_cast<int>(k)]);
  }
  args = old;
  args.insert(args.end(), xs.begin(), xs.end());
  ASSIGN_OR_RETURN(std::vector<Expr> v, ApplyReducer(inst, reducer, args));
  std::vector<Expr> next;
  for (size_t k = 0; k < n; ++k) next.push_back(Halide::select(wi.valid, v[k], old[k]));
  state(at_slot(lhs, 1 - step % 2)) = Halide::Tuple(next);
  std::vector<Expr> final_values;
  for (size_t k = 0; k < n; ++k) {
    final_values.push_back(state(at_slot(pure, static_cast<int>(steps % 2)))[static_cast<int>(k)]);
  }
  // The result reads one slot; it is inlined into the kernel's outputs.
  out.func = Halide::Func(HalideName("reduce_window", inst));
  out.func(pure) = Halide::Tuple(final_values);
  out.kind = LoweringKind::kReduction;
  out.helpers = {state};
  out.schedule = [state, result](Halide::Func) mutable {
    state.compute_root();
    if (result.rank() == 0) return;
    std::vector<Halide::Var> a = state.args();  // innermost HLO dim first, slot last
    const int width = VectorLanes(result.type());
    if (result.dim(result.rank() - 1) >= width) {
      state.vectorize(a[0], width);
      state.update().vectorize(a[0], width);
    }
    // Output elements fold independently: parallel over the outermost dim.
    if (result.num_elements() >= 64 && result.rank() >= 2) {
      const Halide::Var outer = a[static_cast<size_t>(result.rank() - 1)];
      state.parallel(outer);
      state.update().parallel(outer);
    }
  };
  return out;
}

// reduce-window with one input and a plain binary reducer (the fast path).
absl::StatusOr<Lowered> LowerReduceWindow(const hlo::Instruction& inst,
                                          absl::Span<const LoweredValue> ops) {
  if (inst.operand_count() != 2 || !PlainBinaryReducer(*inst.attr_computation("to_apply"))) {
    return LowerComputationReduceWindow(inst, ops);
  }
  ASSIGN_OR_RETURN(hlo::Opcode op, PlainReducer(inst));
  const hlo::Shape& input = ops[0].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("reduce_window", inst));
  Expr init = Call(ops[1].func, {});
  Define(out.func, vars, init);
  if (inst.shape().num_elements() == 0) return out;
  Halide::RDom r = WindowRDom(inst, input.rank());
  WindowIndex wi = GetWindowIndex(inst, input, vars, r);
  if (input.num_elements() == 0) return out;
  std::vector<Expr> kept = AsExprs(vars);
  std::vector<Expr> lhs(kept.rbegin(), kept.rend());
  Expr acc = Call(out.func, kept);
  Expr x = Call(ops[0].func, wi.index);
  out.func(lhs) =
      Halide::select(wi.valid, ToStorage(Combine(op, ToCompute(acc, t), ToCompute(x, t)), t), acc);
  out.kind = LoweringKind::kReduction;
  return out;
}

}  // namespace

void RegisterReduceLowerings(LoweringTable& table) {
  table.Add(hlo::Opcode::kReduce, LowerReduce, [](const hlo::Instruction& inst) {
    const hlo::Computation* reducer = inst.attr_computation("to_apply");
    if (reducer == nullptr) return LoweringError(inst, "has no reducer");
    return CheckReducerLowerable(inst, *reducer);
  });
  table.AllowTupleResult(hlo::Opcode::kReduce);
  table.Add(hlo::Opcode::kReduceWindow, LowerReduceWindow, [](const hlo::Instruction& inst) {
    const hlo::Computation* reducer = inst.attr_computation("to_apply");
    if (reducer == nullptr) return LoweringError(inst, "has no reducer");
    return CheckReducerLowerable(inst, *reducer);
  });
  table.AllowTupleResult(hlo::Opcode::kReduceWindow);
}

}  // namespace sharc::codegen
