// Fusion: groups a per-device module's kernel instructions into fused
// kernels, each a `call` to a new computation marked with
// backend_config="sharc.fusion" (so the fused module prints, parses and
// runs on any backend; the Halide factory compiles each such call as one
// kernel).
//
// Groups are grown from consumers towards producers:
// - elementwise ops and data movement (broadcast, reshape, transpose, slice,
//   pad, concatenate, reverse, iota, dynamic slices) fuse freely;
// - a group holds at most one reduction or dot: a reduction takes its
//   producers in, a dot takes only its elementwise epilogue (its operands
//   stay kernel inputs so the GEMM schedule reads packed memory); the
//   exception are sibling reductions over the same rows (softmax's max and
//   sum, layernorm's mean and variance), which share one group so the
//   kernel computes them per row in one pass (row_kernel_schedule.h);
// - a producer joins only if all its users are in the group (no work is
//   duplicated), except small constants, which are copied in;
// - collectives, control flow, tuples, parameters and ops without a Halide
//   lowering are boundaries.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::codegen {

struct FusionStats {
  int64_t fusions = 0;         // calls created
  int64_t fused_instructions = 0;
};

// Rewrites `module` in place. Computations reached through control flow are
// fused too; reducers and other to_apply bodies of kernels are left alone.
absl::StatusOr<FusionStats> FuseModule(hlo::Module& module);

}  // namespace sharc::codegen
