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
// - a producer joins if all its users are in the group; a value made from
//   indices and smaller arrays only (a broadcast, an iota, a small constant,
//   a cheap elementwise op over those) joins as a copy otherwise, so each
//   kernel recomputes it instead of reading a stored buffer, and a producer
//   every reader recomputes needs no kernel of its own:
//
//     before:  m = compare(iota, broadcast(c))      after:  fusion.0 = call(s)
//              a = select(m, s, z)  ; kernel 1               {m' = compare(...), select(m', ...)}
//              b = select(m, t, z)  ; kernel 2              fusion.1 = call(t)
//                                                             {m'' = compare(...), select(m'', ...)}
//     (m is a buffer two kernels read)                      (m is computed in each, never stored)
// - a kernel over rows (one without a dot) computes again the full-size
//   and per-row values it can make from what it reads anyway, rather than
//   reading them (fusion_recompute.h): softmax's gradient reads the scores,
//   so it computes their max, exp and sum itself, and the forward softmax
//   becomes one kernel, as no other kernel reads its intermediate values;
//   the training step's medium size took 407-414 ms against 420-435
//   (one thread, alternated);
// - a reshape read from outside its group is never a group's root: it stays
//   an alias of its operand's buffer, so a dot's epilogue ends at it;
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
