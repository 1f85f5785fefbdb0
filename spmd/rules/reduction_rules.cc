// Reductions and contractions: reduce, reduce-window, dot, and the
// collectives that reduce or regroup per-device values.
#include "spmd/sharding_rule.h"

#include <algorithm>

#include "hlo/ops/convolution_dims.h"
#include "hlo/ops/dot_dimension_numbers.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// Inputs keep their dims; reduced dims are reduction factors. Every input
// of a variadic reduce shares the mapping; init values have no dims.
absl::StatusOr<ShardingRule> ReduceRule(const Instruction& inst) {
  ShardingRule rule;
  const int64_t n = inst.operand_count() / 2;
  const hlo::Shape& in = inst.operand(0)->shape();
  const std::vector<int64_t>& reduced = inst.attr_ints("dimensions");
  DimFactors input, output;
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool is_reduced = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    int64_t f = rule.AddFactor(in.dim(d), is_reduced ? FactorKind::kReduction
                                                     : FactorKind::kPassThrough);
    input.push_back({f});
    if (!is_reduced) output.push_back({f});
  }
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(input);
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(DimFactors(0));
  for (int64_t i = 0; i < n; ++i) rule.results.push_back(output);
  return rule;
}

// Dims with a real window move data between neighbours (a halo exchange when
// split); dims with a unit window are pointwise.
absl::StatusOr<ShardingRule> ReduceWindowRule(const Instruction& inst) {
  ShardingRule rule;
  const int64_t n = inst.operand_count() / 2;
  const hlo::IntListList& window = inst.attr_int_lists("window");
  DimFactors dims;
  for (int64_t d = 0; d < inst.operand(0)->shape().rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    bool trivial = w.size() >= 6 && w[0] == 1 && w[1] == 1 && w[2] == 0 && w[3] == 0 &&
                   w[4] == 1 && w[5] == 1;
    int64_t out_size =
        inst.shape().is_array() ? inst.shape().dim(d) : inst.shape().tuple_shape(0).dim(d);
    dims.push_back({rule.AddFactor(out_size, trivial ? FactorKind::kPassThrough
                                                     : FactorKind::kPermutation)});
  }
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(dims);
  for (int64_t i = 0; i < n; ++i) rule.operands.push_back(DimFactors(0));
  for (int64_t i = 0; i < n; ++i) rule.results.push_back(dims);
  return rule;
}

// True if the windows along a dim tile it exactly without overlapping:
// window w = {size, stride, pad_lo, pad_hi, window_dilation, base_dilation},
// size <= stride, no padding or dilation, and `extent` == windows * stride.
// Each window then lies inside one block of `stride` elements.
bool WindowsTileDim(const std::vector<int64_t>& w, int64_t extent, int64_t windows) {
  return w.size() >= 6 && w[0] <= w[1] && w[2] == 0 && w[3] == 0 && w[4] == 1 &&
         w[5] == 1 && extent == windows * w[1];
}

// select-and-scatter: like reduce-window over (operand, source) -> result
// of operand's shape. A unit-window dim is pointwise across all three. A dim
// whose windows tile it (max-pool backward with size <= stride) is two
// factors on the operand, [window index, offset in the block]: splitting the
// window index splits operand and source alike and every window stays on one
// device. Any other window picks elements across neighbours' windows, so each
// tensor keeps that dim whole.
absl::StatusOr<ShardingRule> SelectAndScatterRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::IntListList& window = inst.attr_int_lists("window");
  const hlo::Shape& operand = inst.operand(0)->shape();
  const hlo::Shape& source = inst.operand(1)->shape();
  DimFactors x(operand.rank()), s(operand.rank());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    const std::vector<int64_t>& w = window[static_cast<size_t>(d)];
    bool trivial = w.size() >= 6 && w[0] == 1 && w[1] == 1 && w[2] == 0 && w[3] == 0 &&
                   w[4] == 1 && w[5] == 1;
    if (trivial) {
      x[d] = s[d] = {rule.AddFactor(operand.dim(d), FactorKind::kPassThrough)};
    } else if (WindowsTileDim(w, operand.dim(d), source.dim(d))) {
      int64_t windows = rule.AddFactor(source.dim(d), FactorKind::kPassThrough);
      int64_t offset = rule.AddFactor(w[1], FactorKind::kNeedReplication);
      x[d] = {windows, offset};
      s[d] = {windows};
    } else {
      x[d] = {rule.AddFactor(operand.dim(d), FactorKind::kNeedReplication)};
      s[d] = {rule.AddFactor(source.dim(d), FactorKind::kNeedReplication)};
    }
  }
  rule.operands = {x, s, DimFactors(0)};
  rule.results = {x};
  return rule;
}

// topk: like sort along the last dim, which each tensor keeps whole; the
// other dims pass through to both results.
absl::StatusOr<ShardingRule> TopKRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& x = inst.operand(0)->shape();
  if (x.rank() < 1 || !inst.shape().is_tuple()) {
    rule.kind = ShardingRule::Kind::kReplicated;
    rule.reason = "topk of a scalar";
    return rule;
  }
  const int64_t last = x.rank() - 1;
  DimFactors in(x.rank()), out(x.rank());
  for (int64_t d = 0; d < last; ++d) {
    in[d] = out[d] = {rule.AddFactor(x.dim(d), FactorKind::kPassThrough)};
  }
  in[last] = {rule.AddFactor(x.dim(last), FactorKind::kNeedReplication)};
  out[last] = {rule.AddFactor(inst.shape().tuple_shape(0).dim(last), FactorKind::kNeedReplication)};
  rule.operands = {in};
  rule.results = {out, out};
  return rule;
}

absl::StatusOr<ShardingRule> DotRule(const Instruction& inst) {
  ShardingRule rule;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  const auto& lb = inst.attr_ints("lhs_batch_dims");
  const auto& rb = inst.attr_ints("rhs_batch_dims");
  const auto& lc = inst.attr_ints("lhs_contracting_dims");
  const auto& rc = inst.attr_ints("rhs_contracting_dims");
  DimFactors l(lhs.rank()), r(rhs.rank()), out;
  for (size_t i = 0; i < lb.size(); ++i) {
    int64_t f = rule.AddFactor(lhs.dim(lb[i]), FactorKind::kPassThrough);
    l[lb[i]] = {f};
    r[rb[i]] = {f};
    out.push_back({f});
  }
  auto is_listed = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  for (int64_t d = 0; d < lhs.rank(); ++d) {
    if (is_listed(lb, d) || is_listed(lc, d)) continue;
    int64_t f = rule.AddFactor(lhs.dim(d), FactorKind::kPassThrough);
    l[d] = {f};
    out.push_back({f});
  }
  for (int64_t d = 0; d < rhs.rank(); ++d) {
    if (is_listed(rb, d) || is_listed(rc, d)) continue;
    int64_t f = rule.AddFactor(rhs.dim(d), FactorKind::kPassThrough);
    r[d] = {f};
    out.push_back({f});
  }
  // Contracting factors last, so the rule reads ([i,k],[k,j])->([i,j]).
  for (size_t i = 0; i < lc.size(); ++i) {
    int64_t f = rule.AddFactor(lhs.dim(lc[i]), FactorKind::kReduction);
    l[lc[i]] = {f};
    r[rc[i]] = {f};
  }
  rule.operands = {l, r};
  rule.results = {out};
  return rule;
}

// convolution: like dot, batch and output feature pass through and the input
// feature is a reduction factor. Spatial dims with a real window read
// neighbours (a halo exchange when split, which sharc does not have), so
// each tensor's spatial dim is its own need-replication factor; a unit
// window (1x1, stride 1, no padding or dilation) is pointwise. Under
// feature or batch groups the grouped dims are kept whole: splitting them
// would change the local op's group count, which the partitioner does not
// rewrite.
absl::StatusOr<ShardingRule> ConvolutionRule(const Instruction& inst) {
  auto cd_or = hlo::GetConvDims(inst);
  if (!cd_or.ok()) return cd_or.status();
  const hlo::ConvDims& cd = *cd_or;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  ShardingRule rule;
  const int64_t rank = lhs.rank();
  DimFactors l(rank), r(rank), out(rank);
  auto own = [&](DimFactors& t, int64_t d, int64_t size) {
    t[d] = {rule.AddFactor(size, FactorKind::kNeedReplication)};
  };
  // Feature groups: the input features are G runs of ci (group major), the
  // kernel's and result's output features G runs of co, and the kernel's
  // input feature is ci. Batch groups: the input batch is B runs of nb and
  // the output features B runs of co. A group factor passes through (each
  // device convolves its own groups); ci is contracted. Factors of size 1
  // are left out.
  const int64_t fg = cd.feature_group_count, bg = cd.batch_group_count;
  const int64_t out_features = rhs.dim(cd.rhs_output_feature);
  auto factor = [&](DimFactors& t, int64_t d, int64_t f) {
    if (f >= 0) t[d].push_back(f);
  };
  auto add = [&](int64_t size, FactorKind kind) -> int64_t {
    return size > 1 ? rule.AddFactor(size, kind) : -1;
  };
  const int64_t groups = fg > 1 ? fg : bg;
  const int64_t batch = add(lhs.dim(cd.lhs_batch) / bg, FactorKind::kPassThrough);
  const int64_t group = add(groups, FactorKind::kPassThrough);
  const int64_t per_group_out = add(out_features / groups, FactorKind::kPassThrough);
  if (bg > 1) factor(l, cd.lhs_batch, group);
  factor(l, cd.lhs_batch, batch);
  factor(out, cd.out_batch, batch);
  for (DimFactors* t : {&r, &out}) {
    const int64_t d = t == &r ? cd.rhs_output_feature : cd.out_feature;
    factor(*t, d, group);
    factor(*t, d, per_group_out);
  }
  for (size_t s = 0; s < cd.window.size(); ++s) {
    const hlo::ConvWindowDim& w = cd.window[s];
    const bool pointwise = w.size == 1 && w.stride == 1 && w.pad_lo == 0 && w.pad_hi == 0 &&
                           w.lhs_dilation == 1 && w.rhs_dilation == 1;
    const int64_t out_size = cd.out_dims[cd.out_spatial[s]];
    if (pointwise) {
      int64_t f = rule.AddFactor(lhs.dim(cd.lhs_spatial[s]), FactorKind::kPassThrough);
      l[cd.lhs_spatial[s]] = {f};
      out[cd.out_spatial[s]] = {f};
      // The kernel's spatial dim has size 1: no factor.
    } else if (w.CoversWholeInput(lhs.dim(cd.lhs_spatial[s]))) {
      // One window covering the whole input (a weight gradient's 1x1
      // result): input and kernel positions pair up one to one, a
      // contraction like a dot's. Split, each device convolves its block
      // with its kernel block and the partial sums are all-reduced.
      int64_t f = rule.AddFactor(w.size, FactorKind::kReduction);
      l[cd.lhs_spatial[s]] = {f};
      r[cd.rhs_spatial[s]] = {f};
    } else if (out_size >= rhs.dim(cd.rhs_spatial[s])) {
      // A window no wider than the result (a forward convolution): input
      // and result rows correspond, as in reduce-window, so a split of
      // either carries to the other and the partitioner exchanges halos.
      // A wider window (a weight gradient, whose kernel is the image) keeps
      // its dims apart: its split is a reduction, not a halo.
      int64_t f = rule.AddFactor(out_size, FactorKind::kPermutation);
      l[cd.lhs_spatial[s]] = {f};
      out[cd.out_spatial[s]] = {f};
      own(r, cd.rhs_spatial[s], rhs.dim(cd.rhs_spatial[s]));
    } else {
      own(l, cd.lhs_spatial[s], lhs.dim(cd.lhs_spatial[s]));
      own(r, cd.rhs_spatial[s], rhs.dim(cd.rhs_spatial[s]));
      own(out, cd.out_spatial[s], out_size);
    }
  }
  // The contracted input feature last, as for dot (after its feature group).
  const int64_t ci = add(rhs.dim(cd.rhs_input_feature), FactorKind::kReduction);
  if (fg > 1) factor(l, cd.lhs_feature, group);
  factor(l, cd.lhs_feature, ci);
  factor(r, cd.rhs_input_feature, ci);
  rule.operands = {l, r};
  rule.results = {out};
  return rule;
}

ShardingRule ReplicatedRule(std::string reason) {
  ShardingRule rule;
  rule.kind = ShardingRule::Kind::kReplicated;
  rule.reason = std::move(reason);
  return rule;
}

// ragged-dot: a dot whose lhs is cut into groups along its ragged dim by
// group_sizes, which count global positions: the ragged dim stays whole in
// every tensor (and the rhs group dim, and a contracting-mode result's
// group dim), while the other batch, free and contracting dims split as a
// dot's do (a split contracting dim leaves partial sums for an all-reduce).
// group_sizes with a prefix (one size list per batch index) keeps the op
// replicated.
//
//   ragged-dot(f32[m,k] x, f32[g,k,n] w, s32[g] sizes), ragged dim m:
//   ([m!,k],[g!,k,n],[g!]) -> ([m!,n])   ! = kept whole, k a reduction
absl::StatusOr<ShardingRule> RaggedDotRule(const Instruction& inst) {
  const hlo::IntList& group = inst.attr_ints("rhs_group_dims");
  auto dims_or = hlo::GetDotDims(inst, group);
  if (!dims_or.ok()) return dims_or.status();
  const hlo::DotDims& dd = *dims_or;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  const hlo::Shape& sizes = inst.operand(2)->shape();
  const hlo::IntList& ragged_dims = inst.attr_ints("lhs_ragged_dims");
  if (sizes.rank() != 1 || ragged_dims.size() != 1) {
    return ReplicatedRule("ragged-dot with per-batch group sizes runs replicated");
  }
  const int64_t ragged = ragged_dims[0];
  auto listed = [](const hlo::IntList& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  const bool contracting_mode = listed(dd.lhs_contracting, ragged);
  ShardingRule rule;
  DimFactors l(lhs.rank()), r(rhs.rank()), g(1), out;
  auto kind = [&](int64_t lhs_dim, FactorKind usual) {
    return lhs_dim == ragged ? FactorKind::kNeedReplication : usual;
  };
  if (contracting_mode) {
    out.push_back({rule.AddFactor(sizes.dim(0), FactorKind::kNeedReplication)});
  }
  for (size_t i = 0; i < dd.lhs_batch.size(); ++i) {
    const int64_t f = rule.AddFactor(lhs.dim(dd.lhs_batch[i]),
                                     kind(dd.lhs_batch[i], FactorKind::kPassThrough));
    l[dd.lhs_batch[i]] = r[dd.rhs_batch[i]] = {f};
    out.push_back({f});
  }
  for (int64_t d : dd.lhs_free) {
    const int64_t f = rule.AddFactor(lhs.dim(d), kind(d, FactorKind::kPassThrough));
    l[d] = {f};
    out.push_back({f});
  }
  for (int64_t d : dd.rhs_free) {
    const int64_t f = rule.AddFactor(rhs.dim(d), FactorKind::kPassThrough);
    r[d] = {f};
    out.push_back({f});
  }
  for (size_t i = 0; i < dd.lhs_contracting.size(); ++i) {
    const int64_t f = rule.AddFactor(lhs.dim(dd.lhs_contracting[i]),
                                     kind(dd.lhs_contracting[i], FactorKind::kReduction));
    l[dd.lhs_contracting[i]] = r[dd.rhs_contracting[i]] = {f};
  }
  for (int64_t d : group) r[d] = {rule.AddFactor(rhs.dim(d), FactorKind::kNeedReplication)};
  g[0] = {rule.AddFactor(sizes.dim(0), FactorKind::kNeedReplication)};
  rule.operands = {l, r, g};
  rule.results = {out};
  return rule;
}

}  // namespace

void RegisterReductionRules(ShardingRuleRegistry& registry) {
  registry.Register(Opcode::kReduce, ReduceRule);
  registry.Register(Opcode::kReduceWindow, ReduceWindowRule);
  registry.Register(Opcode::kSelectAndScatter, SelectAndScatterRule);
  registry.Register(Opcode::kTopK, TopKRule);
  registry.Register(Opcode::kDot, DotRule);
  registry.Register(Opcode::kConvolution, ConvolutionRule);
  registry.Register(Opcode::kRaggedDot, RaggedDotRule);
  // Collectives other than all-reduce change shapes by the group size: they
  // only appear in per-device programs, after partitioning.
  for (Opcode op : {Opcode::kAllGather, Opcode::kReduceScatter, Opcode::kAllToAll,
                    Opcode::kCollectivePermute, Opcode::kCollectiveBroadcast,
                    Opcode::kRaggedAllToAll}) {
    registry.Register(op, [](const Instruction&) -> absl::StatusOr<ShardingRule> {
      return ReplicatedRule("a collective of a per-device program; it is not partitioned again");
    });
  }
}

}  // namespace sharc::spmd
