// sort, and the ops that work on trailing dims.
//
// sort: every operand gets the batch dim at 0 (unbatched ones are
// broadcast: they are sorted along with the batched keys), and the sort
// dimension moves up by one. The comparator sees scalars and is unchanged.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<BatchedValue> BatchSort(const Instruction& inst,
                                       absl::Span<const BatchedValue> operands,
                                       BatchingContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched,
                   MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
  auto sort = CloneWithOperands(inst, batched);
  sort->clear_sharding();
  sort->set_attr("dimensions", ShiftDims(inst.attr_ints("dimensions")));
  sort->set_shape(BatchTree::Uniform(inst.shape(), true).Apply(inst.shape(), ctx.batch_size()));
  return BatchedValue{ctx.emitter().Add(std::move(sort)),
                      BatchTree::Uniform(inst.shape(), true)};
}

// Ops that work on trailing dims (bitcast-convert, cholesky,
// triangular-solve, fft, topk): the batch dim leads every operand and the result.
absl::StatusOr<BatchedValue> BatchLeading(const Instruction& inst,
                                          absl::Span<const BatchedValue> operands,
                                          BatchingContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Instruction*> batched,
                   MaterializeAll(ctx.emitter(), operands, ctx.batch_size()));
  auto op = CloneWithOperands(inst, batched);
  op->clear_sharding();
  op->set_shape(BatchTree::Uniform(inst.shape(), true).Apply(inst.shape(), ctx.batch_size()));
  return BatchedValue{ctx.emitter().Add(std::move(op)), BatchTree::Uniform(inst.shape(), true)};
}

}  // namespace

void RegisterSortBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kSort, BatchSort);
  for (Opcode op : {Opcode::kBitcastConvert, Opcode::kCholesky, Opcode::kFft, Opcode::kTriangularSolve,
                    Opcode::kTopK}) {
    registry.Register(op, BatchLeading);
  }
  registry.RegisterUnsupported(Opcode::kRng,
                               "rng with batched bounds is not supported (draw with the "
                               "batched shape instead)");
  registry.RegisterUnsupported(Opcode::kRngBitGenerator,
                               "rng-bit-generator with a batched state is not supported");
  registry.RegisterUnsupported(Opcode::kRngGetAndUpdateState,
                               "rng-get-and-update-state has no operands to batch");
}

}  // namespace sharc::hlo
