// cholesky and triangular-solve evaluate as XLA defines them, checked against
// NumPy: the values below are printed by tests/hlo/linalg_expected.py (rerun
// it and paste its output to change them). Batched, both triangles, junk in
// the triangle that must not be read, and every triangular-solve flag.
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/op_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using testing::Lit;
using testing::NamedAttr;
using testing::OpHarness;

struct SolveCase {
  bool left_side;
  bool lower;
  bool unit_diagonal;
  const char* transpose_a;
  std::vector<double> expected;
};

// cholesky
constexpr double kCholeskyLowerInput[] = {3.7781000000000002, 99.0, 99.0, -0.7389, 4.193099999999999, 99.0, -0.7090000000000001, 0.5936999999999999, 3.8585000000000003, 3.1225, 99.0, 99.0, 0.1875, 3.925, 99.0, -0.1114, 0.03619999999999997, 3.1917};
constexpr double kCholeskyUpperInput[] = {3.7781000000000002, -0.7389, -0.7090000000000001, -99.0, 4.193099999999999, 0.5936999999999999, -99.0, -99.0, 3.8585000000000003, 3.1225, 0.1875, -0.1114, -99.0, 3.925, 0.03619999999999997, -99.0, -99.0, 3.1917};
constexpr double kCholeskyLower[] = {1.9437335208304662, 0.0, 0.0, -0.3801447019776161, 2.012110833318669, 0.0, -0.36476193490611697, 0.22614941256084808, 1.9168477180104655, 1.7670597047072292, 0.0, 0.0, 0.1061084690576799, 1.9783177178588467, 0.0, -0.06304257841613621, 0.021679708519016093, 1.785288666727366};
constexpr double kCholeskyUpper[] = {1.9437335208304662, -0.3801447019776161, -0.36476193490611697, 0.0, 2.012110833318669, 0.22614941256084808, 0.0, 0.0, 1.9168477180104655, 1.7670597047072292, 0.1061084690576799, -0.06304257841613621, 0.0, 1.9783177178588467, 0.021679708519016093, 0.0, 0.0, 1.785288666727366};
// triangular-solve
constexpr double kSolveA[] = {3.25, 0.49, -0.96, 0.31, 3.08, 0.7, 0.88, -0.97, 3.66, 2.51, 0.25, 0.53, 0.69, 3.88, 0.27, 0.72, 0.0, 2.4699999999999998};
constexpr double kSolveBLeft[] = {-1.36, -0.01, 0.98, -0.2, 0.73, -1.5, 1.89, -0.1, 1.31, 0.92, 1.12, -0.47};
constexpr double kSolveBRight[] = {-1.56, -0.18, -0.67, -0.41, 1.97, -0.76, 1.13, -1.33, 0.37, -0.61, -1.03, -0.43};
const SolveCase kSolveCases[] = {
    {true, true, false, "NO_TRANSPOSE",
     {-0.4184615384615385, -0.0030769230769230774, 0.3602997002997003, -0.06462537462537463, 0.3955565199827495, -0.4262237489286669, 0.7529880478087649, -0.03984063745019921, 0.2037211976834929, 0.244198463876453, 0.23394680387760705, -0.1786699356420472}},
    {true, true, false, "TRANSPOSE",
     {-0.5088086503660275, 0.12639933836655146, 0.3809967355049322, -0.19400681285927185, 0.19945355191256828, -0.40983606557377045, 0.5301029281596433, -0.05043991985644801, 0.3376288659793815, 0.23711340206185572, 0.4534412955465588, -0.19028340080971662}},
    {true, true, false, "ADJOINT",
     {-0.5088086503660275, 0.12639933836655146, 0.3809967355049322, -0.19400681285927185, 0.19945355191256828, -0.40983606557377045, 0.5301029281596433, -0.05043991985644801, 0.3376288659793815, 0.23711340206185572, 0.4534412955465588, -0.19028340080971662}},
    {true, true, true, "NO_TRANSPOSE",
     {-1.36, -0.01, 1.4016, -0.19690000000000002, 3.286352, -1.682193, 1.89, -0.1, 0.005900000000000238, 0.989, -0.24079999999999968, -0.39799999999999996}},
    {true, true, true, "TRANSPOSE",
     {-2.5257110000000003, 1.82305, 1.6881, -1.655, 0.73, -1.5, 0.17969999999999997, -0.3964000000000001, 1.31, 0.92, 1.12, -0.47}},
    {true, true, true, "ADJOINT",
     {-2.5257110000000003, 1.82305, 1.6881, -1.655, 0.73, -1.5, 0.17969999999999997, -0.3964000000000001, 1.31, 0.92, 1.12, -0.47}},
    {true, false, false, "NO_TRANSPOSE",
     {-0.4006836333065842, -0.12838931560243036, 0.2728514654744163, 0.02820949542261015, 0.19945355191256828, -0.40983606557377045, 0.6267559255028802, -0.024597008268940183, 0.30607496139237866, 0.25035477273675866, 0.4534412955465588, -0.19028340080971662}},
    {true, false, false, "TRANSPOSE",
     {-0.4184615384615385, -0.0030769230769230774, 0.38475524475524475, -0.06444555444555444, 0.016106079712637073, -0.39831747487485186, 0.7529880478087649, -0.03984063745019921, 0.28911159485768273, 0.23968045344395617, 0.2602656696557815, -0.20793448768472172}},
    {true, false, false, "ADJOINT",
     {-0.4184615384615385, -0.0030769230769230774, 0.38475524475524475, -0.06444555444555444, 0.016106079712637073, -0.39831747487485186, 0.7529880478087649, -0.03984063745019921, 0.28911159485768273, 0.23968045344395617, 0.2602656696557815, -0.20793448768472172}},
    {true, false, true, "NO_TRANSPOSE",
     {-0.8890100000000001, -1.8664999999999998, 0.469, 0.8499999999999999, 0.73, -1.5, 1.0444999999999998, -0.112625, 1.0076, 1.0469, 1.12, -0.47}},
    {true, false, true, "TRANSPOSE",
     {-1.36, -0.01, 1.6463999999999999, -0.19510000000000002, -1.7280799999999998, -1.37303, 1.89, -0.1, 0.8375000000000001, 0.9450000000000001, -0.10782500000000006, -0.67215}},
    {true, false, true, "ADJOINT",
     {-1.36, -0.01, 1.6463999999999999, -0.19510000000000002, -1.7280799999999998, -1.37303, 1.89, -0.1, 0.8375000000000001, 0.9450000000000001, -0.10782500000000006, -0.67215}},
    {false, true, false, "NO_TRANSPOSE",
     {-0.41935941108072256, -0.1160936058477042, -0.18306010928961747, -0.12469972650300519, 0.5742140373287914, -0.2076502732240437, 0.501460704201018, -0.34278350515463923, 0.14979757085020245, -0.12011385153488469, -0.26546391752577325, -0.17408906882591094}},
    {false, true, false, "TRANSPOSE",
     {-0.48000000000000004, -0.010129870129870122, -0.07033496558086721, -0.12615384615384614, 0.6523076923076923, -0.004438839848675932, 0.450199203187251, -0.4228447036595885, 0.018565414455538165, -0.24302788844621515, -0.2222450404567298, -0.10324693130312759}},
    {false, true, false, "ADJOINT",
     {-0.48000000000000004, -0.010129870129870122, -0.07033496558086721, -0.12615384615384614, 0.6523076923076923, -0.004438839848675932, 0.450199203187251, -0.4228447036595885, 0.018565414455538165, -0.24302788844621515, -0.2222450404567298, -0.10324693130312759}},
    {false, true, true, "NO_TRANSPOSE",
     {-0.713131, -0.8299000000000001, -0.67, -0.12336799999999992, 1.2328000000000001, -0.76, 1.7812999999999999, -1.33, 0.37, 0.4103, -1.03, -0.43}},
    {false, true, true, "TRANSPOSE",
     {-1.56, 0.30360000000000004, 0.997292, -0.41, 2.0971, 1.634987, 1.13, -2.1097, -0.4435999999999999, -0.61, -0.6091000000000001, 0.009199999999999986}},
    {false, true, true, "ADJOINT",
     {-1.56, 0.30360000000000004, 0.997292, -0.41, 2.0971, 1.634987, 1.13, -2.1097, -0.4435999999999999, -0.61, -0.6091000000000001, 0.009199999999999986}},
    {false, false, false, "NO_TRANSPOSE",
     {-0.48000000000000004, 0.017922077922077922, -0.31238946845504223, -0.12615384615384614, 0.6596803196803197, -0.36690817379341967, 0.450199203187251, -0.37179118577237447, 0.09383726415761057, -0.24302788844621515, -0.24980490409496042, -0.09463477531087718}},
    {false, false, false, "TRANSPOSE",
     {-0.5315346402231649, -0.016836988148463565, -0.18306010928961747, -0.29103939776070925, 0.686803633524945, -0.2076502732240437, 0.4537486765654939, -0.3532075629199884, 0.14979757085020245, -0.1810340340711531, -0.25334947201469177, -0.17408906882591094}},
    {false, false, false, "ADJOINT",
     {-0.5315346402231649, -0.016836988148463565, -0.18306010928961747, -0.29103939776070925, 0.686803633524945, -0.2076502732240437, 0.4537486765654939, -0.3532075629199884, 0.14979757085020245, -0.1810340340711531, -0.25334947201469177, -0.17408906882591094}},
    {false, false, true, "NO_TRANSPOSE",
     {-1.56, 0.5844, -2.57668, -0.41, 2.1709, -2.67323, 1.13, -1.6125, 0.20647500000000005, -0.61, -0.8775000000000001, 0.1302250000000001}},
    {false, false, true, "TRANSPOSE",
     {-2.34481, 0.289, -0.67, -2.3655799999999996, 2.502, -0.76, 1.291375, -1.4299000000000002, 0.37, -0.15362499999999998, -0.9139, -0.43}},
    {false, false, true, "ADJOINT",
     {-2.34481, 0.289, -0.67, -2.3655799999999996, 2.502, -0.76, 1.291375, -1.4299000000000002, 0.37, -0.15362499999999998, -0.9139, -0.43}},
};

template <size_t N>
std::vector<double> Of(const double (&values)[N]) {
  return std::vector<double>(values, values + N);
}

void ExpectNear(const Literal& result, const std::vector<double>& expected, double tolerance,
                const std::string& what) {
  ASSERT_EQ(result.num_elements(), static_cast<int64_t>(expected.size())) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(result.GetAsDouble(static_cast<int64_t>(i)), expected[i],
                tolerance * (1 + std::abs(expected[i])))
        << what << " element " << i;
  }
}

Literal Matrices(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal l(Shape(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(LinalgEvalTest, CholeskyReadsOneTriangleAndZerosTheOther) {
  for (PrimitiveType type : {PrimitiveType::kF64, PrimitiveType::kF32}) {
    const double tolerance = type == PrimitiveType::kF64 ? 1e-12 : 1e-6;
    for (bool lower : {true, false}) {
      OpHarness h;
      const Shape shape(type, {2, 3, 3});
      ASSERT_OK_AND_ASSIGN(
          Literal result,
          h.Run(Opcode::kCholesky, shape,
                {Matrices(type, {2, 3, 3},
                          lower ? Of(kCholeskyLowerInput) : Of(kCholeskyUpperInput))},
                {{"lower", AttrValue(lower)}}));
      ExpectNear(result, lower ? Of(kCholeskyLower) : Of(kCholeskyUpper), tolerance,
                 PrimitiveTypeName(type) + (lower ? " lower" : " upper"));
    }
  }
}

TEST(LinalgEvalTest, CholeskyOfAMatrixThatIsNotPositiveDefiniteIsNaN) {
  // Batch element 0 has a negative pivot; element 1 is the identity.
  OpHarness h;
  const Shape shape(PrimitiveType::kF32, {2, 2, 2});
  ASSERT_OK_AND_ASSIGN(Literal result,
                       h.Run(Opcode::kCholesky, shape,
                             {Matrices(PrimitiveType::kF32, {2, 2, 2}, {1, 0, 2, 1, 1, 0, 0, 1})},
                             {{"lower", AttrValue(true)}}));
  const double expected[] = {NAN, NAN, NAN, NAN, 1, 0, 0, 1};
  for (int64_t i = 0; i < 8; ++i) {
    if (i < 4) {
      EXPECT_TRUE(std::isnan(result.GetAsDouble(i))) << i;
    } else {
      EXPECT_EQ(result.GetAsDouble(i), expected[i]) << i;
    }
  }
}

TEST(LinalgEvalTest, TriangularSolveMatchesNumPyForEveryFlag) {
  for (const SolveCase& c : kSolveCases) {
    OpHarness h;
    const std::vector<int64_t> b_dims =
        c.left_side ? std::vector<int64_t>{2, 3, 2} : std::vector<int64_t>{2, 2, 3};
    const Shape b_shape(PrimitiveType::kF64, b_dims);
    std::vector<NamedAttr> attrs = {{"left_side", AttrValue(c.left_side)},
                                    {"lower", AttrValue(c.lower)},
                                    {"unit_diagonal", AttrValue(c.unit_diagonal)},
                                    {"transpose_a", AttrValue(std::string(c.transpose_a))}};
    ASSERT_OK_AND_ASSIGN(
        Literal result,
        h.Run(Opcode::kTriangularSolve, b_shape,
              {Matrices(PrimitiveType::kF64, {2, 3, 3}, Of(kSolveA)),
               Matrices(PrimitiveType::kF64, b_dims,
                        c.left_side ? Of(kSolveBLeft) : Of(kSolveBRight))},
              std::move(attrs)));
    ExpectNear(result, c.expected, 1e-12,
               std::string(c.left_side ? "left" : "right") + (c.lower ? " lower" : " upper") +
                   (c.unit_diagonal ? " unit " : " ") + c.transpose_a);
  }
}

}  // namespace
}  // namespace sharc::hlo
