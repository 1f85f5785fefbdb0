// Dots the GEMM schedule runs at full speed: a dot without batch dims whose
// free and contracting dims are each consecutive on both operands becomes a
// plain 2-D dot between reshapes (row-major: the reshapes move no data), so
// that it takes the packed register-tiled schedule of codegen/dot_lowering.cc
// instead of the generic loop nest. The frontend writes such dots for every
// projection of a [batch, time, width] activation and their gradients.
//
// Before:
//   %d = f32[16,128,512] dot(f32[16,128,256] %h, f32[256,512] %w),
//        lhs_contracting_dims={2}, rhs_contracting_dims={0}
// After:
//   %h.gemm = f32[2048,256] reshape(%h)
//   %d.gemm = f32[2048,512] dot(%h.gemm, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
//   %d = f32[16,128,512] reshape(%d.gemm)
// and a weight gradient, contracting over [batch, time]:
//   %g = f32[256,512] dot(f32[16,128,256] %h, f32[16,128,512] %dy),
//        lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
// becomes a [2048,256]^T x [2048,512] dot (a transposed lhs, which the GEMM
// packs). A plain dot read only by a transpose of its two dims computes
// the transposed product directly, operands swapped (the same bits):
//   %g = f32[1024,256] dot(f32[2048,1024] %h, f32[2048,256] %dy),
//        lhs_contracting_dims={0}, rhs_contracting_dims={0}
//   %t = f32[256,1024] transpose(%g), dimensions={1,0}
// becomes
//   %t = f32[256,1024] dot(%dy, %h), lhs_contracting_dims={0}, rhs_contracting_dims={0}
// except where both operands contract their first dim and the swap would
// make the wider one the lhs, which the GEMM packs whole: transpose(dot(%dy,
// %h)) keeps its transpose (it fuses into its reader) rather than pack %h.
// For the same reason such a dot with the wider operand as its lhs, packed
// whole (f32, 1 MiB or more), becomes the transpose of the swapped product:
//   %g = f32[1024,256] dot(f32[2048,1024] %dlogits, f32[2048,256] %h),
//        lhs_contracting_dims={0}, rhs_contracting_dims={0}
// becomes
//   %g.narrow_lhs = f32[256,1024] dot(%h, %dlogits), lhs_contracting_dims={0}, rhs_contracting_dims={0}
//   %g = f32[1024,256] transpose(%g.narrow_lhs), dimensions={1,0}
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::codegen {

// Rewrites every such dot (and transpose of a dot) of every computation in
// place; returns how many.
absl::StatusOr<int64_t> CanonicalizeDots(hlo::Module& module);

}  // namespace sharc::codegen
