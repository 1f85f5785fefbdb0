// Kernels fuse a multiply and the add that consumes it into one FMA, as
// XLA's CPU backend does (AllowFPOpFusion = Fast), and keep every other IEEE
// rule: the product is not rounded on its own, NaN still propagates through
// maximum, and an add feeding a multiply is not fused.
#include <cmath>

#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

TEST(FpContractionTest, MultiplyAddRoundsOnce) {
  testing_util::UseFreshCacheDir();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule fma
ENTRY main {
  a = f32[1031] parameter(0)
  b = f32[1031] parameter(1)
  c = f32[1031] parameter(2)
  m = f32[1031] multiply(a, b)
  ROOT r = f32[1031] add(m, c)
}
)"));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 5);
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  const absl::Span<const float> a = args[0].data<float>();
  const absl::Span<const float> b = args[1].data<float>();
  const absl::Span<const float> c = args[2].data<float>();
  const absl::Span<const float> r = actual.data<float>();
  int rounded_twice_differs = 0;
  for (int i = 0; i < 1031; ++i) {
    ASSERT_EQ(r[i], std::fmaf(a[i], b[i], c[i])) << "element " << i;
    rounded_twice_differs += (a[i] * b[i] + c[i]) != std::fmaf(a[i], b[i], c[i]);
  }
  // The inputs are such that rounding the product first would show.
  EXPECT_GT(rounded_twice_differs, 0);
}

TEST(FpContractionTest, NanAndUnfusableOrderKeepTheirSemantics) {
  testing_util::UseFreshCacheDir();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule strict
ENTRY main {
  a = f32[517] parameter(0)
  b = f32[517] parameter(1)
  m = f32[517] multiply(a, b)
  x = f32[517] maximum(m, b)
  s = f32[517] add(a, b)
  p = f32[517] multiply(s, a)
  ROOT t = (f32[517], f32[517]) tuple(x, p)
}
)"));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 6);
  args[0].SetFromDouble(3, std::nan(""));
  args[1].SetFromDouble(4, std::nan(""));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual));  // bit for bit
}

// Dot kernels are compiled like every other (they used to drop StrictFloat
// to get FMAs, and with it the NaN rules of their epilogue).
TEST(FpContractionTest, DotEpilogueSeesNan) {
  testing_util::UseFreshCacheDir();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule dot_relu
ENTRY main {
  a = f32[12,96] parameter(0)
  b = f32[96,128] parameter(1)
  d = f32[12,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  z = f32[12,128] broadcast(zero), dimensions={}
  ROOT r = f32[12,128] maximum(d, z)
}
)"));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 7);
  args[0].SetFromDouble(2 * 96 + 5, std::nan(""));  // row 2 of the product is NaN
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  for (int j = 0; j < 128; ++j) ASSERT_TRUE(std::isnan(actual.data<float>()[2 * 128 + j])) << j;
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5));
}

}  // namespace
}  // namespace sharc::codegen
