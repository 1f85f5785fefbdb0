#!/usr/bin/python3
"""Prints the inputs and NumPy's answers that tests/hlo/linalg_eval_test.cc
checks cholesky and triangular-solve against (paste its output there).

XLA's semantics, written with NumPy's full-matrix routines: only the named
triangle of `a` is read (the other is filled with junk here to prove it), the
unit diagonal replaces a's, and op(a) is a, a^T or a^H.
"""
import itertools

import numpy as np

rng = np.random.default_rng(23)


def values(x):
    return ", ".join(repr(float(v)) for v in np.asarray(x).ravel())


def spd_batch(batch, n):
    x = np.round(rng.uniform(-1, 1, (batch, n, n)), 2)
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def main():
    # cholesky: a symmetric positive-definite batch whose unread triangle is
    # overwritten with junk.
    a = spd_batch(2, 3)
    lower_in = np.tril(a) + np.triu(np.full_like(a, 99.0), 1)
    upper_in = np.triu(a) + np.tril(np.full_like(a, -99.0), -1)
    print("// cholesky")
    print(f"constexpr double kCholeskyLowerInput[] = {{{values(lower_in)}}};")
    print(f"constexpr double kCholeskyUpperInput[] = {{{values(upper_in)}}};")
    l = np.linalg.cholesky(a)
    print(f"constexpr double kCholeskyLower[] = {{{values(l)}}};")
    print(f"constexpr double kCholeskyUpper[] = {{{values(np.swapaxes(l, -1, -2))}}};")

    # triangular-solve: a [2,3,3] with both triangles set, b [2,3,2] (left)
    # or [2,2,3] (right).
    a = np.round(rng.uniform(-1, 1, (2, 3, 3)), 2) + 3 * np.eye(3)
    b_left = np.round(rng.uniform(-2, 2, (2, 3, 2)), 2)
    b_right = np.round(rng.uniform(-2, 2, (2, 2, 3)), 2)
    print("// triangular-solve")
    print(f"constexpr double kSolveA[] = {{{values(a)}}};")
    print(f"constexpr double kSolveBLeft[] = {{{values(b_left)}}};")
    print(f"constexpr double kSolveBRight[] = {{{values(b_right)}}};")
    print("const SolveCase kSolveCases[] = {")
    for left, lower, unit, transpose in itertools.product(
            [True, False], [True, False], [False, True],
            ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]):
        m = np.tril(a) if lower else np.triu(a)
        if unit:
            m = m - m * np.eye(3) + np.eye(3)
        if transpose != "NO_TRANSPOSE":
            m = np.conj(np.swapaxes(m, -1, -2)) if transpose == "ADJOINT" else np.swapaxes(m, -1, -2)
        if left:
            x = np.linalg.solve(m, b_left)
        else:  # x m = b  <=>  m^T x^T = b^T
            x = np.swapaxes(np.linalg.solve(np.swapaxes(m, -1, -2), np.swapaxes(b_right, -1, -2)), -1, -2)
        flags = f"{str(left).lower()}, {str(lower).lower()}, {str(unit).lower()}, \"{transpose}\""
        print(f"    {{{flags},\n     {{{values(x)}}}}},")
    print("};")


if __name__ == "__main__":
    main()
