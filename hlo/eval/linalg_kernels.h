// The arithmetic of cholesky and triangular-solve on one matrix, for the
// reference evaluators in hlo/ops/linalg_ops.cc. Matrices are dense row-major
// and computed in double (or complex<double>), like the interpreter's dot;
// callers round the result to the element type.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace sharc::hlo {

// Factors the n x n matrix `a` as XLA's cholesky does: lower=true gives L
// with a = L L^H reading only a's lower triangle; lower=false gives U with
// a = U^T U reading only its upper triangle (XLA factors the transpose). The
// other triangle of the result is zero. A matrix whose factorisation takes
// the square root of a negative (or NaN) pivot is not positive definite: the
// whole result is NaN, as in XLA and JAX, rather than an error.
template <typename Scalar>
std::vector<Scalar> CholeskyFactor(const std::vector<Scalar>& a, int64_t n, bool lower);

// How triangular-solve uses its a: XLA's transpose_a.
enum class TriangularTranspose { kNone, kTranspose, kAdjoint };

struct TriangularSolveFlags {
  bool left_side = true;
  bool lower = true;
  bool unit_diagonal = false;
  TriangularTranspose transpose = TriangularTranspose::kNone;
};

// Solves op(a) x = b (left_side) or x op(a) = b for x, with a m x m (only
// its `lower` triangle read; its diagonal taken as ones when unit_diagonal)
// and b m x k (left) or k x m (right). Returns x in b's layout. A zero pivot
// gives infinities or NaNs, as substitution does, not an error.
template <typename Scalar>
std::vector<Scalar> SolveTriangular(const std::vector<Scalar>& a, const std::vector<Scalar>& b,
                                    int64_t m, int64_t k, const TriangularSolveFlags& flags);

extern template std::vector<double> CholeskyFactor(const std::vector<double>&, int64_t, bool);
extern template std::vector<std::complex<double>> CholeskyFactor(
    const std::vector<std::complex<double>>&, int64_t, bool);
extern template std::vector<double> SolveTriangular(const std::vector<double>&,
                                                    const std::vector<double>&, int64_t, int64_t,
                                                    const TriangularSolveFlags&);
extern template std::vector<std::complex<double>> SolveTriangular(
    const std::vector<std::complex<double>>&, const std::vector<std::complex<double>>&, int64_t,
    int64_t, const TriangularSolveFlags&);

}  // namespace sharc::hlo
