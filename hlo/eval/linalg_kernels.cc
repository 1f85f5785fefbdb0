#include "hlo/eval/linalg_kernels.h"

#include <cmath>
#include <limits>

namespace sharc::hlo {
namespace {

double Conj(double x) { return x; }
std::complex<double> Conj(std::complex<double> x) { return std::conj(x); }

}  // namespace

template <typename Scalar>
std::vector<Scalar> CholeskyFactor(const std::vector<Scalar>& a, int64_t n, bool lower) {
  // XLA factors the upper case as the lower factor of a's transpose (not its
  // adjoint), transposed back: element (i, j) of that transpose is a[j][i].
  auto at = [&](int64_t i, int64_t j) { return lower ? a[i * n + j] : a[j * n + i]; };
  std::vector<Scalar> l(static_cast<size_t>(n * n), Scalar(0));
  for (int64_t j = 0; j < n; ++j) {
    Scalar pivot = at(j, j);
    for (int64_t k = 0; k < j; ++k) pivot -= l[j * n + k] * Conj(l[j * n + k]);
    const double root = std::sqrt(std::real(pivot));
    if (std::isnan(root)) {
      return std::vector<Scalar>(l.size(), Scalar(std::numeric_limits<double>::quiet_NaN()));
    }
    l[j * n + j] = Scalar(root);
    for (int64_t i = j + 1; i < n; ++i) {
      Scalar v = at(i, j);
      for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * Conj(l[j * n + k]);
      l[i * n + j] = v / Scalar(root);
    }
  }
  if (lower) return l;
  std::vector<Scalar> u(l.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) u[i * n + j] = l[j * n + i];
  return u;
}

template <typename Scalar>
std::vector<Scalar> SolveTriangular(const std::vector<Scalar>& a, const std::vector<Scalar>& b,
                                    int64_t m, int64_t k, const TriangularSolveFlags& flags) {
  // op(a) with the unread triangle zeroed and the diagonal made explicit.
  std::vector<Scalar> op(static_cast<size_t>(m * m), Scalar(0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      if (flags.lower ? j > i : j < i) continue;
      Scalar v = i == j && flags.unit_diagonal ? Scalar(1) : a[i * m + j];
      switch (flags.transpose) {
        case TriangularTranspose::kNone: op[i * m + j] = v; break;
        case TriangularTranspose::kTranspose: op[j * m + i] = v; break;
        case TriangularTranspose::kAdjoint: op[j * m + i] = Conj(v); break;
      }
    }
  }
  const bool op_lower = flags.lower == (flags.transpose == TriangularTranspose::kNone);
  // x op = b is op^T x^T = b^T: solve with M = op^T on the columns of b^T,
  // the rows of b. Element (r, c) of M and of the right-hand side's column
  // `col` are read through these views so both sides share one substitution.
  const bool left = flags.left_side;
  auto matrix = [&](int64_t r, int64_t c) { return left ? op[r * m + c] : op[c * m + r]; };
  const bool m_lower = left ? op_lower : !op_lower;
  auto rhs_index = [&](int64_t row, int64_t col) { return left ? row * k + col : col * m + row; };
  std::vector<Scalar> x = b;
  for (int64_t col = 0; col < k; ++col) {
    for (int64_t step = 0; step < m; ++step) {
      const int64_t r = m_lower ? step : m - 1 - step;
      Scalar v = x[rhs_index(r, col)];
      if (m_lower) {
        for (int64_t c = 0; c < r; ++c) v -= matrix(r, c) * x[rhs_index(c, col)];
      } else {
        for (int64_t c = r + 1; c < m; ++c) v -= matrix(r, c) * x[rhs_index(c, col)];
      }
      x[rhs_index(r, col)] = v / matrix(r, r);
    }
  }
  return x;
}

template std::vector<double> CholeskyFactor(const std::vector<double>&, int64_t, bool);
template std::vector<std::complex<double>> CholeskyFactor(const std::vector<std::complex<double>>&,
                                                          int64_t, bool);
template std::vector<double> SolveTriangular(const std::vector<double>&,
                                             const std::vector<double>&, int64_t, int64_t,
                                             const TriangularSolveFlags&);
template std::vector<std::complex<double>> SolveTriangular(
    const std::vector<std::complex<double>>&, const std::vector<std::complex<double>>&, int64_t,
    int64_t, const TriangularSolveFlags&);

}  // namespace sharc::hlo
