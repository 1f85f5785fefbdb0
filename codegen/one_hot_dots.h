// Products with a one-hot matrix as the row lookups they are: a dot that
// contracts a one-hot's class dim picks rows (a gather), and one that
// contracts its token dims adds rows into their classes (a scatter-add).
// Programs written for accelerators spell embedding lookups so (JAX's
// one_hot(x) @ E, the transformer LM of examples/); on a CPU the product
// costs tokens x classes x width FMAs where the lookup moves tokens x width
// values. A one-hot is convert(compare(broadcast(ids), iota) EQ) to a float
// type, the iota over the class dim, the broadcast over all the others.
//
// Before (the embedding and its gradient):
//   %iota = s32[16,128,1024] iota(), iota_dimension=2
//   %b = s32[16,128,1024] broadcast(s32[16,128] %ids), dimensions={0,1}
//   %c = pred[16,128,1024] compare(%b, %iota), direction=EQ
//   %h = f32[16,128,1024] convert(%c)
//   %x = f32[16,128,256] dot(%h, f32[1024,256] %E), lhs_contracting_dims={2}, rhs_contracting_dims={0}
//   %g = f32[256,1024] dot(f32[16,128,256] %dx, %h), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
// After:
//   %x = gather(%E, reshape(%ids)) with ids outside [0, 1024) reading zeros
//   %g = transpose(scatter(zeros f32[1024,256], reshape(%ids), %dx, add))
//
// The values are the dot's, not an approximation of them: a product term
// 0 * inf or 0 * NaN is NaN, so wherever a non-finite value sits in a row
// the one-hot does not select (in the same column), the dot's element is
// NaN, and so is the rewrite's (it counts the non-finite values per column
// and subtracts the selected ones). Only the order of a scatter's additions
// differs from the dot's. Lookups are rewritten in f16, bf16, f32 and f64
// (one row, exact in any of them); sums of rows in f32 and f64 only, as a
// bf16 scatter would round after each addition where the dot does not.
// Dots with batch dims stay.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::codegen {

// Rewrites every such dot of every computation in place; returns how many.
absl::StatusOr<int64_t> RewriteOneHotDots(hlo::Module& module);

}  // namespace sharc::codegen
