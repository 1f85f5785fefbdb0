// Moves the reshape after a flattened dot (dot_canonicalizer.h) below the
// elementwise ops that read it, so that they are computed in the GEMM's own
// [rows, columns] shape and fusion can take them into its epilogue (a
// group's dot takes only elementwise epilogues: codegen/fusion.h). Without
// this, the bias add of every projection of a [batch, time, width]
// activation is a kernel of its own that reads the GEMM's result back.
//
// Before:
//   %d.gemm = f32[2048,1024] dot(%h.gemm, %w), ...
//   %d = f32[16,128,1024] reshape(%d.gemm)
//   %b = f32[16,128,1024] broadcast(f32[1024] %bias), dimensions={2}
//   %a = f32[16,128,1024] add(%d, %b)
// After:
//   %b.gemm = f32[2048,1024] broadcast(%bias), dimensions={1}
//   %a.gemm = f32[2048,1024] add(%d.gemm, %b.gemm)
//   %a = f32[16,128,1024] reshape(%a.gemm)
//
// An op moves when one operand is such a reshape (of a dot, or of an op
// moved before it) and each other operand is a reshape from the same shape,
// a broadcast whose dims the reshape keeps, or a value of the op's shape,
// which is read through a reshape of its own (row-major: a reshape moves no
// data, only its indices). The values and their order of evaluation are
// unchanged.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::codegen {

// Rewrites every computation of `module` in place; returns how many ops moved.
absl::StatusOr<int64_t> SinkGemmResultReshapes(hlo::Module& module);

}  // namespace sharc::codegen
