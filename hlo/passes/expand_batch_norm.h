// Rewrites batch-norm-training, -inference and -grad into the primitive ops
// they are made of (as XLA's BatchNormExpander does), so that propagation,
// the partitioner, autodiff and Halide see reductions, broadcasts and
// elementwise arithmetic. R is every dim but feature_index f, n the number
// of elements per feature, b(v) v broadcast along f:
//
//   %t = (f32[8,3], f32[3], f32[3]) batch-norm-training(%x, %s, %o), epsilon=e, feature_index=1
// ->
//   %mean = f32[3] divide(reduce(%x, dims=R), n)
//   %xc = f32[8,3] subtract(%x, b(%mean))
//   %var = f32[3] divide(reduce(%xc * %xc, dims=R), n)
//   %y = f32[8,3] add(multiply(%xc, b(%s * rsqrt(%var + e))), b(%o))
//   %t = (f32[8,3], f32[3], f32[3]) tuple(%y, %mean, %var)
//
// inference computes %y from the given mean and variance; grad computes
//   dx = b(s * rstd) * (dy - b(sum(dy) / n) - xc * b(sum(dy * xc) / n * rstd^2)),
//   dscale = sum(dy * xc) * rstd, doffset = sum(dy), with rstd = rsqrt(var + e).
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

absl::Status ExpandBatchNorm(Module& module);

}  // namespace sharc::hlo
