// Vectorised row reductions (see row_reduction.h).
#include "codegen/row_reduction.h"

#include "codegen/reducer.h"

namespace sharc::codegen {

using Halide::Expr;

bool IsVectorizableRowReduction(const hlo::Instruction& inst, hlo::Opcode op) {
  using hlo::PrimitiveType;
  if (inst.operand_count() != 2 || !inst.shape().is_array()) return false;
  const hlo::Shape& input = inst.operand(0)->shape();
  const hlo::IntList& dims = inst.attr_ints("dimensions");
  if (input.rank() < 2 || dims.size() != 1 || dims[0] != input.rank() - 1) return false;
  const PrimitiveType t = inst.shape().type();
  if (t == PrimitiveType::kPred || input.num_elements() == 0) return false;
  if (input.dim(input.rank() - 1) < std::max<int64_t>(kVectorizedRow, 4 * VectorLanes(t))) return false;
  if (hlo::IsFloatingPoint(t)) {
    if (op == hlo::Opcode::kMaximum || op == hlo::Opcode::kMinimum) return true;
    return op == hlo::Opcode::kAdd && (t == PrimitiveType::kF32 || t == PrimitiveType::kF64);
  }
  return true;  // integer ops wrap, so every order gives the same bits
}

Lowered LowerRowReduction(const hlo::Instruction& inst, absl::Span<const LoweredValue> ops,
                          hlo::Opcode op) {
  const hlo::Shape& input = ops[0].shape;
  const hlo::PrimitiveType t = inst.shape().type();
  const int lanes = VectorLanes(t);
  const int partials = 4 * lanes;
  const int64_t row = input.dim(input.rank() - 1);
  const int chunks = static_cast<int>(row / partials);
  const int tail = static_cast<int>(row % partials);

  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  std::vector<Expr> kept = AsExprs(vars);
  auto element = [&](const Expr& column) {
    std::vector<Expr> index = kept;
    index.push_back(column);
    return Call(ops[0].func, index);
  };
  auto combine = [&](const Expr& a, const Expr& b) {
    return ToStorage(Combine(op, ToCompute(a, t), ToCompute(b, t)), t);
  };
  // Halide argument lists: the lane innermost, then the kept dims reversed.
  Halide::Var lane("lane");
  auto with_lane = [&](const Expr& l) {
    std::vector<Expr> a = {l};
    a.insert(a.end(), kept.rbegin(), kept.rend());
    return a;
  };

  Halide::Func partial(HalideName("row_partial", inst));
  partial(with_lane(lane)) = element(lane);
  Halide::RDom chunk(1, std::max(chunks - 1, 1), HalideName("chunk", inst));
  if (chunks > 1) {
    partial(with_lane(lane)) =
        combine(partial(with_lane(lane)), element(chunk.x * partials + lane));
  }
  if (tail > 0) {
    Halide::RDom rest(0, tail, HalideName("rest", inst));
    partial(with_lane(rest.x)) =
        combine(partial(with_lane(rest.x)), element(chunks * partials + rest.x));
  }
  // Four vectors into one, then the lanes of that one as a tree.
  Halide::Func quad(HalideName("row_quad", inst));
  quad(with_lane(lane)) =
      combine(combine(partial(with_lane(lane)), partial(with_lane(lane + lanes))),
              combine(partial(with_lane(lane + 2 * lanes)), partial(with_lane(lane + 3 * lanes))));
  std::function<Expr(int, int)> tree = [&](int lo, int n) -> Expr {
    if (n == 1) return quad(with_lane(lo));
    return combine(tree(lo, n / 2), tree(lo + n / 2, n - n / 2));
  };
  Lowered out;
  out.func = Halide::Func(HalideName("reduce", inst));
  Define(out.func, vars, combine(Call(ops[1].func, {}), tree(0, lanes)));
  out.kind = LoweringKind::kReduction;
  out.helpers = {partial, quad};

  auto schedule_at = [partial, quad, lane, chunk, chunks, tail, lanes](Halide::LoopLevel at) mutable {
    partial.compute_at(at).vectorize(lane, lanes).unroll(lane);
    if (chunks > 1) partial.update(0).reorder(lane, chunk.x).vectorize(lane, lanes).unroll(lane);
    // The tail (fewer than 4 vectors) stays a scalar loop.
    if (tail > 0) partial.update(chunks > 1 ? 1 : 0).unscheduled();
    quad.compute_at(at).vectorize(lane, lanes);
  };
  out.schedule_in_row = [schedule_at](Halide::Func f, Halide::LoopLevel at) mutable {
    f.compute_at(at);
    schedule_at(at);
  };
  const int64_t rows = inst.shape().num_elements();
  out.schedule = [schedule_at, rows](Halide::Func f) mutable {
    f.compute_root();
    std::vector<Halide::Var> args = f.args();
    if (rows >= 16) f.parallel(args.back());
    schedule_at(Halide::LoopLevel(f, args[0]));
  };
  return out;
}

}  // namespace sharc::codegen
