// cholesky, triangular-solve and fft: the leading (batch) dims are
// independent problems and pass through; the trailing dims the op works on
// must be whole on each device (a factorisation, a substitution or a
// transform needs its whole matrix or signal).
//
//   cholesky a[b, n, n]                     -> [b, n, n]       b splits
//   triangular-solve a[b, m, m], x[b, m, k] -> [b, m, k]       b splits
//   fft x[b, n] (fft_length={n})            -> [b, n']         b splits
#include "hlo/base/status_macros.h"
#include "spmd/sharding_rule.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The result's first `batch_rank` dims are shared by every operand and the
// result; every other dim of each gets a factor of its own that stays whole.
absl::StatusOr<ShardingRule> LeadingBatchRule(const Instruction& inst, int64_t batch_rank) {
  ShardingRule rule;
  DimFactors batch;
  for (int64_t d = 0; d < batch_rank; ++d) {
    batch.push_back({rule.AddFactor(inst.shape().dim(d), FactorKind::kPassThrough)});
  }
  auto dims_of = [&](const hlo::Shape& shape) {
    DimFactors dims = batch;
    for (int64_t d = batch_rank; d < shape.rank(); ++d) {
      dims.push_back({rule.AddFactor(shape.dim(d), FactorKind::kNeedReplication)});
    }
    return dims;
  };
  for (const Instruction* operand : inst.operands()) rule.operands.push_back(dims_of(operand->shape()));
  rule.results.push_back(dims_of(inst.shape()));
  return rule;
}

}  // namespace

void RegisterLinalgRules(ShardingRuleRegistry& registry) {
  for (Opcode op : {Opcode::kCholesky, Opcode::kTriangularSolve}) {
    registry.Register(op, [](const Instruction& inst) {
      return LeadingBatchRule(inst, inst.shape().rank() - 2);
    });
  }
  registry.Register(Opcode::kFft, [](const Instruction& inst) {
    return LeadingBatchRule(
        inst, inst.shape().rank() - static_cast<int64_t>(inst.attr_ints("fft_length").size()));
  });
}

}  // namespace sharc::spmd
