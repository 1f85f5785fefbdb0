// convolution's derivatives: the JVP (bilinear, like dot's) matches finite
// differences; the VJP (transpose rule: convolutions with swapped dimension
// numbers) agrees with it, <ct, J t> = <J^T ct, t>, over strides, padding
// (negative too), input and window dilation, layouts, and feature and
// batch groups; a reversed window is refused in reverse mode, naming why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

using testing::Axpy;
using testing::ExpectNear;
using testing::RandomArgs;

constexpr char kConv[] = R"(HloModule m
ENTRY e {
  x = f64[2,5,4,4] parameter(0)
  k = f64[3,2,2,6] parameter(1)
  ROOT c = f64[2,3,2,6] convolution(x, k), window={size=3x2 stride=1x2 pad=0_0x1_0 rhs_dilate=1x1}, dim_labels=b01f_01io->b01f, feature_group_count=2
})";

TEST(ConvolutionDerivativesTest, JvpMatchesFiniteDifferences) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kConv);
  ASSERT_NE(module, nullptr);
  std::mt19937_64 rng(5);
  std::vector<Literal> x = RandomArgs(*module->entry(), rng);
  std::vector<Literal> t = RandomArgs(*module->entry(), rng);
  const double eps = 1e-6;
  std::vector<Literal> plus, minus;
  for (size_t i = 0; i < x.size(); ++i) {
    plus.push_back(Axpy(x[i], eps, t[i]));
    minus.push_back(Axpy(x[i], -eps, t[i]));
  }
  Literal numeric = Axpy(testing::Run(*module, plus), -1, testing::Run(*module, minus));
  numeric = Axpy(Literal(numeric.shape()), 1 / (2 * eps), numeric);
  auto jvp = JvpModule(*module);
  ASSERT_TRUE(jvp.ok()) << jvp.status();
  std::unique_ptr<hlo::Module> reparsed = testing::Reparse(**jvp);
  ASSERT_NE(reparsed, nullptr);
  std::vector<Literal> args = x;
  for (const Literal& l : t) args.push_back(l);
  Literal out = testing::Run(*reparsed, args);
  ASSERT_TRUE(out.is_tuple());
  ExpectNear(out.element(0), testing::Run(*module, x), 1e-12, "primal");
  ExpectNear(out.element(1), numeric, 1e-5, "tangent");
}

TEST(ConvolutionDerivativesTest, ReverseModeOfAReversedWindowNamesTheMissingTranspose) {
  std::unique_ptr<hlo::Module> module = testing::Parse(R"(HloModule m
ENTRY e {
  x = f64[1,5,3] parameter(0)
  k = f64[2,3,2] parameter(1)
  ROOT c = f64[1,4,2] convolution(x, k), window={size=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f
})");
  ASSERT_NE(module, nullptr);
  auto vjp = Vjp(*module, *module->entry());
  ASSERT_FALSE(vjp.ok());
  EXPECT_THAT(vjp.status().message(), ::testing::HasSubstr("convolution"));
  EXPECT_THAT(vjp.status().message(), ::testing::HasSubstr("rhs_reversal"));
}

// Each module's entry is one convolution of two parameters; CheckDerivatives
// checks the JVP against finite differences and the VJP against the JVP
// (both operands linear in turn: the VJP transposes each product term),
// grouped forms included.
TEST(ConvolutionDerivativesTest, VjpAgreesWithJvp) {
  const char* const kModules[] = {
      // NHWC, stride 2, same-style padding.
      R"(HloModule m
ENTRY e {
  x = f64[2,7,6,3] parameter(0)
  k = f64[3,3,3,4] parameter(1)
  ROOT c = f64[2,4,3,4] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_0}, dim_labels=b01f_01io->b01f
})",
      // NCHW / OIHW, window dilation, negative padding.
      R"(HloModule m
ENTRY e {
  x = f64[2,3,9,8] parameter(0)
  k = f64[5,3,2,3] parameter(1)
  ROOT c = f64[2,5,6,4] convolution(x, k), window={size=2x3 pad=0_-1x1_-1 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01
})",
      // 1-D, input dilation (a transposed convolution) with stride.
      R"(HloModule m
ENTRY e {
  x = f64[3,5,2] parameter(0)
  k = f64[4,2,3] parameter(1)
  ROOT c = f64[3,5,3] convolution(x, k), window={size=4 stride=2 pad=2_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f
})",
      // Output dims in another order than the input's; a stride that
      // leaves the last input rows unread.
      R"(HloModule m
ENTRY e {
  x = f64[2,8,3] parameter(0)
  k = f64[3,3,5] parameter(1)
  ROOT c = f64[5,2,2] convolution(x, k), window={size=3 stride=3}, dim_labels=b0f_0io->f0b
})",
      // Feature groups (kConv: 2 groups, stride, padding).
      kConv,
      // Depthwise: one feature per group.
      R"(HloModule m
ENTRY e {
  x = f64[2,6,6,4] parameter(0)
  k = f64[3,3,1,8] parameter(1)
  ROOT c = f64[2,6,6,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
})",
      // Batch groups (as in the kernel gradient of a grouped convolution).
      R"(HloModule m
ENTRY e {
  x = f64[6,5,3] parameter(0)
  k = f64[2,3,4] parameter(1)
  ROOT c = f64[3,4,4] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2
})",
  };
  int i = 0;
  for (const char* text : kModules) {
    std::unique_ptr<hlo::Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr) << text;
    testing::CheckDerivatives(*module, 11 + i, absl::StrCat("convolution module ", i));
    ++i;
  }
}

}  // namespace
}  // namespace sharc::autodiff
