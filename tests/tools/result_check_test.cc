// Tests for tools/result_check.h: `run --check` tolerances follow the dtype
// and the length of the module's reductions.
#include "tools/result_check.h"

#include <complex>
#include <limits>
#include <string>
#include <vector>

#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::tools {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using hlo::Shape;

Literal Values(PrimitiveType type, const std::vector<double>& values) {
  Literal l(Shape(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

std::string Mismatch(PrimitiveType type, const std::vector<double>& got,
                     const std::vector<double>& want, int64_t reduction_length = 1,
                     int64_t devices = 1) {
  double max_diff = 0;
  return FirstMismatch(Values(type, got), Values(type, want), "result", reduction_length, max_diff,
                       devices);
}

// A bf16 dot whose partial sums round and add in another order is off by
// about half a percent (the case that used to fail at f32's 1e-4).
TEST(ResultCheckTest, Bf16AllowsItsRounding) {
  EXPECT_EQ(Mismatch(PrimitiveType::kBF16, {1.0, 2.0, 4.0}, {1.0, 2.0, 4.0 * 1.005}), "");
  EXPECT_EQ(Mismatch(PrimitiveType::kBF16, {1.0, 2.0, 4.0}, {1.0, 2.0, 4.5}),
            "result element 2: partitioned 4, global 4.5");
}

TEST(ResultCheckTest, F32KeepsItsTolerance) {
  EXPECT_EQ(Mismatch(PrimitiveType::kF32, {1.0, 2.0, 4.00002}, {1.0, 2.0, 4.0}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kF32, {1.0, 2.0, 4.02}, {1.0, 2.0, 4.0}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kF16, {1.0, 2.0, 4.1}, {1.0, 2.0, 4.0}), "");
}

// An infinity matches only itself: a relative bound around it is infinite
// and took any value, or the other infinity, as a match.
TEST(ResultCheckTest, InfinitiesMatchOnlyThemselves) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Mismatch(PrimitiveType::kF32, {1.0, inf, -inf}, {1.0, inf, -inf}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kF32, {1.0, inf}, {1.0, -inf}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kF32, {1.0, 5.0}, {1.0, inf}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kF32, {1.0, -inf}, {1.0, 5.0}), "");
}

TEST(ResultCheckTest, IntegersAreExact) {
  EXPECT_NE(Mismatch(PrimitiveType::kS32, {1, 2, 5}, {1, 2, 4}), "");
  EXPECT_EQ(Mismatch(PrimitiveType::kS32, {1, 2, 4}, {1, 2, 4}), "");
}

// A sum that cancels to near zero keeps the rounding error of the values it
// added, so it is judged against the result's typical magnitude.
TEST(ResultCheckTest, CancellationIsJudgedAgainstTheResultsMagnitude) {
  EXPECT_EQ(Mismatch(PrimitiveType::kBF16, {8, -8, 0.06}, {8, -8, 0.0}), "");
  EXPECT_NE(Mismatch(PrimitiveType::kBF16, {8, -8, 1.0}, {8, -8, 0.0}), "");
}

// 64 devices adding their bf16 partial sums of a dot one after another
// (XLA's DefaultMaxWindowedEinsumIteration modules): the running sum rounds
// 63 more times than the global program's f32 accumulator, and element 5
// of the reduced module came out 0.867188 against 0.714844, exactly what
// those adds give. On 8 devices or fewer the same gap is a wrong answer.
TEST(ResultCheckTest, Bf16SumsAcrossManyDevicesAllowTheirRoundings) {
  EXPECT_EQ(Mismatch(PrimitiveType::kBF16, {0.867188, 5, -5}, {0.714844, 5, -5}, 256, 64), "");
  EXPECT_NE(Mismatch(PrimitiveType::kBF16, {0.867188, 5, -5}, {0.714844, 5, -5}, 256, 8), "");
  EXPECT_NE(Mismatch(PrimitiveType::kBF16, {2.0, 5, -5}, {0.714844, 5, -5}, 256, 64), "");
  EXPECT_DOUBLE_EQ(ToleranceFor(PrimitiveType::kBF16, 256, 32).relative,
                   2 * ToleranceFor(PrimitiveType::kBF16, 256, 8).relative);
  EXPECT_EQ(ToleranceFor(PrimitiveType::kF32, 256, 64).relative, 1e-4);
  // Without a reduction no partial results add up: elementwise bf16 keeps
  // its tolerance on any number of devices.
  EXPECT_EQ(ToleranceFor(PrimitiveType::kBF16, 1, 64).relative,
            ToleranceFor(PrimitiveType::kBF16, 1, 1).relative);
}

TEST(ResultCheckTest, LongReductionsWidenTheTolerance) {
  EXPECT_EQ(ToleranceFor(PrimitiveType::kF32, 1024).relative, 1e-4);
  EXPECT_DOUBLE_EQ(ToleranceFor(PrimitiveType::kF32, 4096).relative, 2e-4);
  EXPECT_EQ(ToleranceFor(PrimitiveType::kS32, 4096).relative, 0);
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseModule(R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[4,4096] parameter(0)
  b = f32[4096,2] parameter(1)
  d = f32[4,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[2] reduce(d, z), dimensions={0}, to_apply=add
}
)"));
  EXPECT_EQ(LongestReduction(*module), 4096);
}

}  // namespace
}  // namespace sharc::tools

namespace sharc::tools {
namespace {

// Complex results are compared part by part, each to its float type's
// tolerance: a wrong imaginary part is found, f32 rounding of c64 is not.
TEST(ResultCheckTest, ComplexPartsAreComparedEach) {
  auto c64 = [](std::vector<std::complex<float>> values) {
    hlo::Literal l(hlo::Shape(hlo::PrimitiveType::kC64, {static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) l.data<std::complex<float>>()[i] = values[i];
    return l;
  };
  double max_diff = 0;
  EXPECT_EQ(FirstMismatch(c64({{1, 2}, {3, 4}}), c64({{1, 2}, {3, 4.0000005f}}), "result", 1,
                          max_diff),
            "");
  EXPECT_EQ(FirstMismatch(c64({{1, 2}, {3, 4}}), c64({{1, 2}, {3, -4}}), "result", 1, max_diff),
            "result (as [real, imag] pairs) element 3: partitioned 4, global -4");
}

}  // namespace
}  // namespace sharc::tools
