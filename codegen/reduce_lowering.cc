// Halide lowerings of reduce and reduce-window whose reducer is one plain
// binary op of its two parameters (add, multiply, maximum, minimum, and, or,
// xor). Each step rounds to the storage type, as the interpreter's fast path
// does, so f16/bf16 results agree step for step. Reducers that are whole
// computations (variadic argmax and friends) are refused with a reason.
#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "codegen/reducer.h"
#include "hlo/ir/computation.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;

absl::StatusOr<hlo::Opcode> PlainReducer(const hlo::Instruction& inst) {
  if (inst.operand_count() != 2) {
    return LoweringError(inst, "variadic reductions have no Halide lowering yet");
  }
  const hlo::Computation* reducer = inst.attr_computation("to_apply");
  if (reducer == nullptr) return LoweringError(inst, "has no reducer");
  std::optional<hlo::Opcode> op = PlainBinaryReducer(*reducer);
  if (!op) {
    return LoweringError(inst, "reducer '" + reducer->name() +
                                   "' is not one binary add/multiply/maximum/minimum/and/or/xor");
  }
  return *op;
}

// Rows at least this long are summed as 64 interleaved partial sums (one
// vector accumulator set, perf_anchors.md §3) and then combined: float sums
// of long rows are then not in the interpreter's order, as in XLA.
constexpr int64_t kLongRow = 256;

void ScheduleLongRowSum(Halide::Func f, Halide::RDom r, const hlo::Shape& result,
                        hlo::PrimitiveType t) {
  const int lanes = t == hlo::PrimitiveType::kF32 ? 16 : 8;
  Halide::RVar rx(r[0]), rxo("rxo"), rxi("rxi");
  Halide::Var u("u");
  f.compute_root();
  Halide::Func partial = f.update().split(rx, rxo, rxi, lanes * 4).rfactor(rxi, u);
  std::vector<Halide::Var> args = f.args();
  if (!args.empty()) {
    partial.compute_at(f, args.back());
    if (result.num_elements() >= 2) f.parallel(args.back()).update().parallel(args.back());
  } else {
    partial.compute_root();
  }
  partial.vectorize(u, lanes).unroll(u);
  partial.update().vectorize(u, lanes).unroll(u);
}

absl::StatusOr<Lowered> LowerReduce(const hlo::Instruction& inst,
                                    absl::Span<const LoweredValue> ops) {
  absl::StatusOr<hlo::Opcode> op = PlainReducer(inst);
  if (!op.ok()) return op.status();
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
      // Nothing reduced: combine init with each element once.
      Expr x = Call(ops[0].func, kept);
      Define(out.func, vars,
             ToStorage(Combine(*op, ToCompute(Call(ops[1].func, {}), t), ToCompute(x, t)), t));
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
  out.func(lhs) = ToStorage(Combine(*op, ToCompute(acc, t), ToCompute(x, t)), t);
  out.kind = LoweringKind::kReduction;
  const int64_t inner = input.dim(input.rank() - 1);
  const hlo::Shape result = inst.shape();
  if (*op == hlo::Opcode::kAdd && (t == hlo::PrimitiveType::kF32 || t == hlo::PrimitiveType::kF64) &&
      reduced[static_cast<size_t>(input.rank() - 1)] && inner >= kLongRow) {
    out.schedule = [r, result, t](Halide::Func f) { ScheduleLongRowSum(f, r, result, t); };
  }
  return out;
}

// reduce-window: padding and base-dilation holes hold no element and are
// skipped, as the interpreter does.
absl::StatusOr<Lowered> LowerReduceWindow(const hlo::Instruction& inst,
                                          absl::Span<const LoweredValue> ops) {
  absl::StatusOr<hlo::Opcode> op = PlainReducer(inst);
  if (!op.ok()) return op.status();
  const hlo::Shape& input = ops[0].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  const hlo::IntListList& window = inst.attr_int_lists("window");
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("reduce_window", inst));
  Expr init = Call(ops[1].func, {});
  Define(out.func, vars, init);
  if (inst.shape().num_elements() == 0) return out;
  std::vector<Halide::Range> ranges;
  for (int64_t d = input.rank(); d-- > 0;) {
    ranges.emplace_back(0, static_cast<int>(window[static_cast<size_t>(d)][0]));
  }
  if (ranges.empty()) ranges.emplace_back(0, 1);
  Halide::RDom r(ranges, HalideName("w", inst));
  std::vector<Expr> index;
  Expr valid = const_true();
  for (int64_t d = 0; d < input.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    const int64_t stride = w[1], pad_lo = w[2], base_dilation = w[4], window_dilation = w[5];
    Expr rd = r[static_cast<int>(input.rank() - 1 - d)];
    Expr pos = vars[static_cast<size_t>(d)] * static_cast<int>(stride) +
               rd * static_cast<int>(window_dilation) - static_cast<int>(pad_lo);
    Expr j = base_dilation == 1 ? pos : pos / static_cast<int>(base_dilation);
    Expr ok = pos >= 0 && j < static_cast<int>(input.dim(d));
    if (base_dilation != 1) ok = ok && pos % static_cast<int>(base_dilation) == 0;
    valid = valid && ok;
    index.push_back(ClampIndex(j, input.dim(d)));
  }
  if (input.num_elements() == 0) return out;
  std::vector<Expr> kept = AsExprs(vars);
  std::vector<Expr> lhs(kept.rbegin(), kept.rend());
  Expr acc = Call(out.func, kept);
  Expr x = Call(ops[0].func, index);
  out.func(lhs) =
      Halide::select(valid, ToStorage(Combine(*op, ToCompute(acc, t), ToCompute(x, t)), t), acc);
  out.kind = LoweringKind::kReduction;
  return out;
}

}  // namespace

void RegisterReduceLowerings(LoweringTable& table) {
  auto supports = [](const hlo::Instruction& inst) { return PlainReducer(inst).status(); };
  table.Add(hlo::Opcode::kReduce, LowerReduce, supports);
  table.Add(hlo::Opcode::kReduceWindow, LowerReduceWindow, supports);
}

}  // namespace sharc::codegen
