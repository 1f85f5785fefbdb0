// convolution: a vmapped lhs folds the new dim into the convolution's batch
// dim (vmapped dim major, so slice v is rows [v*N, (v+1)*N)), and the
// result's batch dim is split back. A vmapped kernel would need feature
// groups (one group per slice), and batch groups take their rows from
// major chunks of the batch dim, which the fold would interleave: both are
// refused with the reason.
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ops/convolution_dims.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<BatchedValue> BatchConvolution(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  if (operands[1].batched.batched()) {
    return CannotBatch(inst, "a vmapped kernel is not supported yet (it needs feature groups)");
  }
  ASSIGN_OR_RETURN(ConvDims cd, GetConvDims(inst));
  if (cd.batch_group_count > 1) {
    return CannotBatch(inst, "a convolution with batch_group_count > 1 is not supported yet");
  }
  Emitter& e = ctx.emitter();
  const int64_t v = ctx.batch_size();
  const Shape& lhs = inst.operand(0)->shape();
  const int64_t rank = lhs.rank();
  // [V, lhs...] -> lhs dims with V just before the batch dim -> merged.
  IntList perm;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == cd.lhs_batch) perm.push_back(0);
    perm.push_back(d + 1);
  }
  std::vector<int64_t> moved_dims;
  for (int64_t p : perm) moved_dims.push_back(p == 0 ? v : lhs.dim(p - 1));
  Instruction* moved = e.Add(Opcode::kTranspose, Shape(lhs.type(), moved_dims),
                             {operands[0].inst}, {{"dimensions", perm}});
  std::vector<int64_t> merged_dims = lhs.dims();
  merged_dims[static_cast<size_t>(cd.lhs_batch)] *= v;
  Instruction* merged = e.Add(Opcode::kReshape, Shape(lhs.type(), merged_dims), {moved});

  auto conv = CloneWithOperands(inst, {merged, operands[1].inst});
  conv->clear_sharding();
  std::vector<int64_t> out_dims = inst.shape().dims();
  out_dims[static_cast<size_t>(cd.out_batch)] *= v;
  conv->set_shape(Shape(inst.shape().type(), out_dims));
  Instruction* batched = e.Add(std::move(conv));

  std::vector<int64_t> split_dims = inst.shape().dims();
  split_dims.insert(split_dims.begin() + cd.out_batch, v);
  Instruction* split = e.Add(Opcode::kReshape, Shape(inst.shape().type(), split_dims), {batched});
  return BatchedValue{MoveDimToFront(e, split, cd.out_batch), BatchTree::Leaf(true)};
}

}  // namespace

void RegisterConvolutionBatchingRule(BatchingRuleRegistry& registry) {
  registry.Register(Opcode::kConvolution, BatchConvolution);
}

}  // namespace sharc::hlo
