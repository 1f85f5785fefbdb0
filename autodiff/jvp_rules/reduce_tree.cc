// The JVP of reduce with a general reducer (JAX's recipe for lax.reduce):
// the reduced elements are combined pairwise, neighbours with neighbours, in
// ceil(log2 n) rounds of the elementwise reducer, and the init value is
// combined once in front. Each round is differentiated through the reducer's
// own ops. For an associative reducer (what XLA requires of reduce) this is
// the interpreter's left-to-right fold regrouped, so its derivative is the
// fold's; the primal result is still the original reduce.
#include <algorithm>

#include "autodiff/jvp_rules/reducer_application.h"
#include "autodiff/jvp_rules/reduction_rules.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {
namespace {

// Rows [start, limit) of a [rows, columns] array, every `stride`-th.
Instruction* Rows(Emitter& e, Instruction* x, int64_t start, int64_t limit, int64_t stride) {
  const int64_t columns = x->shape().dim(1);
  const int64_t count = (limit - start + stride - 1) / stride;
  return e.Add(Opcode::kSlice, Shape(x->shape().type(), {count, columns}), {x},
               {{"slice", hlo::IntListList{{start, limit, stride}, {0, columns, 1}}}});
}

Instruction* ConcatRows(Emitter& e, Instruction* a, Instruction* b) {
  return e.Add(Opcode::kConcatenate,
               Shape(a->shape().type(), {a->shape().dim(0) + b->shape().dim(0), a->shape().dim(1)}),
               {a, b}, {{"dimensions", IntList{0}}});
}

}  // namespace

absl::StatusOr<Instruction*> ReduceTreeJvp(const Instruction& inst, const JvpArgs& args,
                                           JvpContext& ctx) {
  const size_t n = static_cast<size_t>(inst.operand_count() / 2);
  const Shape& input = inst.operand(0)->shape();
  IntList reduced = inst.attr_ints("dimensions");
  std::sort(reduced.begin(), reduced.end());
  // Reduced dims first, in the order the interpreter folds them.
  IntList permutation = reduced;
  int64_t count = 1;
  int64_t columns = 1;
  std::vector<int64_t> out_dims;
  for (int64_t d : reduced) count *= input.dim(d);
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    permutation.push_back(d);
    columns *= input.dim(d);
    out_dims.push_back(input.dim(d));
  }

  ReducerApplication reducer(inst, ctx);
  ReductionState rows;
  ReductionState init;
  for (size_t i = 0; i < n; ++i) {
    rows.push_back(JvpValue{args.primals[i], args.tangents[i]});
    init.push_back(JvpValue{args.primals[n + i], args.tangents[n + i]});
  }
  rows = reducer.Map(rows, [&](Emitter& e, Instruction* x) {
    return Reshape(e, Transpose(e, x, permutation), {count, columns});
  });
  init = reducer.Map(init, [&](Emitter& e, Instruction* x) {
    return BroadcastInDim(e, x, Shape(x->shape().type(), {columns}), {});
  });

  while (count > 1) {
    const int64_t pairs = count / 2;
    ReductionState left = reducer.Map(
        rows, [&](Emitter& e, Instruction* x) { return Rows(e, x, 0, 2 * pairs, 2); });
    ReductionState right = reducer.Map(
        rows, [&](Emitter& e, Instruction* x) { return Rows(e, x, 1, 2 * pairs, 2); });
    ASSIGN_OR_RETURN(ReductionState combined, reducer.Apply(left, right));
    if (count % 2 == 1) {
      // The odd row out waits, last, for the next round.
      for (size_t i = 0; i < n; ++i) {
        JvpValue& c = combined[i];
        const JvpValue& r = rows[i];
        Instruction* last_tangent = nullptr;
        if (c.tangent != nullptr || r.tangent != nullptr) {
          last_tangent = ConcatRows(ctx.tangent(), reducer.TangentOrZeros(c),
                                    Rows(ctx.tangent(), reducer.TangentOrZeros(r), count - 1,
                                         count, 1));
        }
        c.primal = ConcatRows(ctx.primal(), c.primal, Rows(ctx.primal(), r.primal, count - 1,
                                                           count, 1));
        c.tangent = last_tangent;
      }
    }
    rows = std::move(combined);
    count = pairs + count % 2;
  }

  ReductionState result = init;
  if (count == 1) {
    rows = reducer.Map(rows, [&](Emitter& e, Instruction* x) { return Reshape(e, x, {columns}); });
    ASSIGN_OR_RETURN(result, reducer.Apply(init, rows));
  }
  result = reducer.Map(result, [&](Emitter& e, Instruction* x) { return Reshape(e, x, out_dims); });
  return reducer.ResultTangent(result);
}

}  // namespace sharc::autodiff
