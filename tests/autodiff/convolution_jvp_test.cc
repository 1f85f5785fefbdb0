// convolution's derivatives: the JVP (bilinear, like dot's) matches finite
// differences; reverse mode is refused with an error naming the op, since
// the transpose rule is not written yet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(ConvolutionDerivativesTest, ReverseModeNamesTheMissingTranspose) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kConv);
  ASSERT_NE(module, nullptr);
  auto vjp = Vjp(*module, *module->entry());
  ASSERT_FALSE(vjp.ok());
  EXPECT_THAT(vjp.status().message(), ::testing::HasSubstr("convolution"));
  EXPECT_THAT(vjp.status().message(), ::testing::HasSubstr("not implemented yet"));
}

}  // namespace
}  // namespace sharc::autodiff
