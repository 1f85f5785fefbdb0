// Matrix helpers the cholesky and triangular-solve derivative rules share
// (jvp_rules/linalg.cc, transpose_rules/linalg.cc): batched matrices
// [..., rows, cols] with the batch dims leading, as the ops take them.
#pragma once

#include <string>

#include "autodiff/builder.h"

namespace sharc::autodiff {

// `x` with the elements outside a triangle zeroed: below the diagonal
// (lower) or above it, with the diagonal kept or not.
Instruction* KeepTriangle(Emitter& e, Instruction* x, bool lower, bool keep_diagonal);
// `x` with its last two dims swapped.
Instruction* SwapMatrixDims(Emitter& e, Instruction* x);
// The conjugate transpose of `x`'s matrices (the transpose for reals).
Instruction* AdjointMatrix(Emitter& e, Instruction* x);
// The batched product a @ b of [..., m, k] and [..., k, n].
Instruction* BatchMatmul(Emitter& e, Instruction* a, Instruction* b);
// A triangular-solve of `b` by `a` with `like`'s flags, transpose_a replaced
// by `transpose_a`.
Instruction* TriangularSolveLike(Emitter& e, const Instruction& like, Instruction* a,
                                 Instruction* b, const std::string& transpose_a);

}  // namespace sharc::autodiff
