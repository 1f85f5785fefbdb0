// convolution: a vmapped lhs folds the new dim into the convolution's batch
// dim (vmapped dim major, so slice v is rows [v*N, (v+1)*N)), and the
// result's batch dim is split back. A vmapped kernel folds the new dim into
// its output features (V*O, vmapped dim major; inside each feature group
// when there are groups), and the result's features are split back. Both
// vmapped: the lhs folds it into its features (or, with batch groups, its
// batch) and the convolution takes V times the groups, one set per slice
// (JAX's conv batching rule). A vmapped lhs alone with batch groups is
// refused with the reason: the fold would interleave the groups' rows.
//
//   x: [V] f32[2,8,3] (b0f), k: [V] f32[3,3,5] (0io)   (both vmapped)
//   -> conv(f32[2,8,V*3], f32[3,3,V*5]), feature_group_count=V
//      : f32[2,6,V*5] -> [2,6,V,5] -> [V,2,6,5]
#include <algorithm>

#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/batching/batching_rule.h"
#include "hlo/ops/convolution_dims.h"

namespace sharc::hlo {
namespace {

// `x` with dim `src` moved next to dim `dst` (both dims of x) and merged
// into it, src major.
Instruction* MergeInto(Emitter& e, Instruction* x, int64_t src, int64_t dst) {
  const std::vector<int64_t>& dims = x->shape().dims();
  IntList perm;
  std::vector<int64_t> merged;
  for (int64_t a = 0; a < static_cast<int64_t>(dims.size()); ++a) {
    if (a == src) continue;
    if (a == dst) perm.push_back(src);
    perm.push_back(a);
    merged.push_back(dims[static_cast<size_t>(a)] * (a == dst ? dims[static_cast<size_t>(src)] : 1));
  }
  Instruction* t = Transpose(e, x, perm);
  return e.Add(Opcode::kReshape, Shape(x->shape().type(), merged), {t});
}

// `x` with dim `d` split into (major, size / major) at d, d + 1.
Instruction* SplitOutOf(Emitter& e, Instruction* x, int64_t d, int64_t major) {
  std::vector<int64_t> dims = x->shape().dims();
  const int64_t size = dims[static_cast<size_t>(d)];
  dims[static_cast<size_t>(d)] = size / major;
  dims.insert(dims.begin() + d, major);
  return e.Add(Opcode::kReshape, Shape(x->shape().type(), dims), {x});
}

// The convolution of `lhs` and `rhs` (operands as given) like `inst`, with
// group counts and result dims replaced.
Instruction* Reconvolve(Emitter& e, const Instruction& inst, Instruction* lhs, Instruction* rhs,
                        int64_t feature_groups, int64_t batch_groups, std::vector<int64_t> out_dims) {
  auto conv = CloneWithOperands(inst, {lhs, rhs});
  conv->clear_sharding();
  conv->set_attr("feature_group_count", feature_groups);
  conv->set_attr("batch_group_count", batch_groups);
  conv->set_shape(Shape(inst.shape().type(), std::move(out_dims)));
  return e.Add(std::move(conv));
}

// A vmapped kernel (the lhs vmapped or not).
absl::StatusOr<BatchedValue> BatchKernel(const Instruction& inst,
                                         absl::Span<const BatchedValue> operands,
                                         const ConvDims& cd, BatchingContext& ctx) {
  Emitter& e = ctx.emitter();
  const int64_t v = ctx.batch_size();
  const int64_t of = cd.out_feature, rof = cd.rhs_output_feature;
  std::vector<int64_t> out_dims = inst.shape().dims();
  out_dims[static_cast<size_t>(of)] *= v;
  Instruction* out = nullptr;
  if (operands[0].batched.batched()) {
    // One set of groups per slice: the lhs's slices side by side in its
    // features (or its batch, with batch groups), the kernel's in its
    // output features.
    Instruction* rhs = MergeInto(e, operands[1].inst, 0, 1 + rof);
    int64_t fg = cd.feature_group_count, bg = cd.batch_group_count;
    Instruction* lhs;
    if (bg > 1) {
      lhs = MergeInto(e, operands[0].inst, 0, 1 + cd.lhs_batch);
      bg *= v;
    } else {
      lhs = MergeInto(e, operands[0].inst, 0, 1 + cd.lhs_feature);
      fg *= v;
    }
    out = SplitOutOf(e, Reconvolve(e, inst, lhs, rhs, fg, bg, out_dims), of, v);
  } else if (cd.feature_group_count == 1 && cd.batch_group_count == 1) {
    Instruction* rhs = MergeInto(e, operands[1].inst, 0, 1 + rof);
    out = SplitOutOf(e, Reconvolve(e, inst, operands[0].inst, rhs, 1, 1, out_dims), of, v);
  } else {
    // Groups stay outermost in the output features: [G, V, O/G] -> G*V*O/G.
    const int64_t g = std::max(cd.feature_group_count, cd.batch_group_count);
    Instruction* rhs = SplitOutOf(e, operands[1].inst, 1 + rof, g);  // [V, .., G, O/G, ..]
    rhs = MergeInto(e, rhs, 0, 2 + rof);                               // [.., G, V*O/G, ..]
    rhs = MergeInto(e, rhs, rof, rof + 1);                             // [.., G*V*O/G, ..]
    Instruction* conv = Reconvolve(e, inst, operands[0].inst, rhs, cd.feature_group_count,
                                   cd.batch_group_count, out_dims);
    out = SplitOutOf(e, SplitOutOf(e, conv, of, g), of + 1, v);  // [.., G, V, O/G, ..]
    out = MergeInto(e, out, of, of + 2);                          // [.., V, O, ..]
  }
  return BatchedValue{MoveDimToFront(e, out, of), BatchTree::Leaf(true)};
}

absl::StatusOr<BatchedValue> BatchConvolution(const Instruction& inst,
                                              absl::Span<const BatchedValue> operands,
                                              BatchingContext& ctx) {
  ASSIGN_OR_RETURN(ConvDims cd, GetConvDims(inst));
  if (operands[1].batched.batched()) return BatchKernel(inst, operands, cd, ctx);
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
  Instruction* moved = Transpose(e, operands[0].inst, perm);
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
