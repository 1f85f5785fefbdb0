// cholesky's and triangular-solve's derivatives (autodiff/jvp_rules/linalg.cc,
// transpose_rules/linalg.cc) against central finite differences at random
// points, forward mode and reverse mode (the dot-product test), for both
// triangles and every triangular-solve flag, on real and complex matrices.
// Random tangents are not symmetric, so a rule that read the triangle the
// op ignores would fail.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

// A batch of two 3x3 matrices made positive definite (and well conditioned)
// by a diagonal of 4 on top of the random entries in [0.5, 1.5].
constexpr char kDiagonal[] =
    "  %d = f64[2,3,3] constant({ { {4,0,0},{0,4,0},{0,0,4} }, { {4,0,0},{0,4,0},{0,0,4} } })\n"
    "  %a = f64[2,3,3] add(%p, %d)\n";

TEST(LinalgDerivativesTest, CholeskyMatchesFiniteDifferencesBothWays) {
  for (bool lower : {true, false}) {
    const std::string text = absl::StrCat(
        "HloModule m\nENTRY %e {\n  %p = f64[2,3,3] parameter(0)\n", kDiagonal,
        "  ROOT %c = f64[2,3,3] cholesky(%a), lower=", lower ? "true" : "false", "\n}\n");
    std::unique_ptr<hlo::Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr);
    testing::CheckDerivatives(*module, lower ? 31 : 32, lower ? "cholesky lower" : "cholesky upper");
  }
}

TEST(LinalgDerivativesTest, TriangularSolveMatchesFiniteDifferencesForEveryFlag) {
  uint64_t seed = 40;
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (bool unit : {false, true}) {
        for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          const std::string b = left ? "f64[2,3,2]" : "f64[2,2,3]";
          const std::string text = absl::StrCat(
              "HloModule m\nENTRY %e {\n  %p = f64[2,3,3] parameter(0)\n  %b = ", b,
              " parameter(1)\n", kDiagonal, "  ROOT %x = ", b,
              " triangular-solve(%a, %b), left_side=", left ? "true" : "false",
              ", lower=", lower ? "true" : "false", ", unit_diagonal=", unit ? "true" : "false",
              ", transpose_a=", transpose, "\n}\n");
          std::unique_ptr<hlo::Module> module = testing::Parse(text);
          ASSERT_NE(module, nullptr);
          testing::CheckDerivatives(*module, ++seed, text);
        }
      }
    }
  }
}

// Reverse mode through a solve by a factor: x = (L L^T)^-1 b, the way a
// Gaussian log-likelihood uses them, differentiated in both a and b.
TEST(LinalgDerivativesTest, SolveByCholeskyFactorMatchesFiniteDifferences) {
  std::unique_ptr<hlo::Module> module = testing::Parse(absl::StrCat(
      "HloModule m\nENTRY %e {\n  %p = f64[2,3,3] parameter(0)\n  %b = f64[2,3,1] parameter(1)\n",
      kDiagonal,
      "  %l = f64[2,3,3] cholesky(%a), lower=true\n"
      "  %y = f64[2,3,1] triangular-solve(%l, %b), left_side=true, lower=true, "
      "transpose_a=NO_TRANSPOSE\n"
      "  ROOT %x = f64[2,3,1] triangular-solve(%l, %y), left_side=true, lower=true, "
      "transpose_a=TRANSPOSE\n}\n"));
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 77, "cholesky solve");
}

// Complex: a Hermitian positive definite A = P P^H + 4 I (its tangent
// dP P^H + P dP^H is Hermitian too, as JAX's symmetrized input is), and
// solves by complex triangles with every flag, ADJOINT conjugating.
constexpr char kHermitian[] =
    "  %re = f64[2,3,3] real(%p)\n"
    "  %im = f64[2,3,3] imag(%p)\n"
    "  %negim = f64[2,3,3] negate(%im)\n"
    "  %conj = c128[2,3,3] complex(%re, %negim)\n"
    "  %pph = c128[2,3,3] dot(%p, %conj), lhs_batch_dims={0}, rhs_batch_dims={0}, "
    "lhs_contracting_dims={2}, rhs_contracting_dims={2}\n"
    "  %d = c128[2,3,3] constant({ { {(4,0),(0,0),(0,0)},{(0,0),(4,0),(0,0)},{(0,0),(0,0),(4,0)} }, "
    "{ {(4,0),(0,0),(0,0)},{(0,0),(4,0),(0,0)},{(0,0),(0,0),(4,0)} } })\n"
    "  %a = c128[2,3,3] add(%pph, %d)\n";

TEST(LinalgDerivativesTest, ComplexCholeskyMatchesFiniteDifferencesBothWays) {
  for (bool lower : {true, false}) {
    const std::string text = absl::StrCat(
        "HloModule m\nENTRY %e {\n  %p = c128[2,3,3] parameter(0)\n", kHermitian,
        "  ROOT %c = c128[2,3,3] cholesky(%a), lower=", lower ? "true" : "false", "\n}\n");
    std::unique_ptr<hlo::Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr);
    testing::CheckDerivatives(*module, lower ? 131 : 132,
                              lower ? "complex cholesky lower" : "complex cholesky upper");
  }
}

TEST(LinalgDerivativesTest, ComplexTriangularSolveMatchesFiniteDifferencesForEveryFlag) {
  uint64_t seed = 140;
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        const std::string b = left ? "c128[2,3,2]" : "c128[2,2,3]";
        const std::string text = absl::StrCat(
            "HloModule m\nENTRY %e {\n  %p = c128[2,3,3] parameter(0)\n  %b = ", b,
            " parameter(1)\n", kHermitian, "  ROOT %x = ", b,
            " triangular-solve(%a, %b), left_side=", left ? "true" : "false",
            ", lower=", lower ? "true" : "false", ", transpose_a=", transpose, "\n}\n");
        std::unique_ptr<hlo::Module> module = testing::Parse(text);
        ASSERT_NE(module, nullptr);
        testing::CheckDerivatives(*module, ++seed, text);
      }
    }
  }
}

// The transpose in b alone, by the dot-product test, for every op: ADJOINT's
// transpose solves by conj(a) (JAX pairs cotangents without conjugating).
TEST(LinalgDerivativesTest, ComplexTriangularSolveTransposeInB) {
  for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
    const std::string text = absl::StrCat(
        "HloModule m\nENTRY %e {\n  %b = c128[2,3,2] parameter(0)\n  %p = c128[2,3,3] "
        "parameter(1)\n",
        kHermitian, "  ROOT %x = c128[2,3,2] triangular-solve(%a, %b), left_side=true, "
        "lower=true, transpose_a=", transpose, "\n}\n");
    std::unique_ptr<hlo::Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr);
    testing::CheckTransposeByDotProduct(*module, 1, text);
  }
}

}  // namespace
}  // namespace sharc::autodiff
