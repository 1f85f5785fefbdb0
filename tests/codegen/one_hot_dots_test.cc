// Products with a one-hot become gathers and scatter-adds
// (codegen/one_hot_dots.h) with the dot's values: ids outside the classes
// select nothing, and an inf or NaN in a row the one-hot does not select
// still makes its column NaN, as 0 * inf does in the dot.
#include "codegen/one_hot_dots.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "codegen/fusion.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/verifier.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Seven classes, ids s32[3,5]; the four ways a one-hot meets a dot, and a
// compare that is not EQ (no one-hot).
constexpr const char* kOneHotDots = R"(
HloModule one_hot_dots
ENTRY main {
  ids = s32[3,5] parameter(0)
  e = f32[7,4] parameter(1)
  et = f32[4,7] parameter(2)
  g = f32[3,5,4] parameter(3)
  g2 = f32[4,5,3] parameter(4)
  iota = s32[3,5,7] iota(), iota_dimension=2
  b = s32[3,5,7] broadcast(ids), dimensions={0,1}
  c = pred[3,5,7] compare(b, iota), direction=EQ
  h = f32[3,5,7] convert(c)
  c2 = pred[3,5,7] compare(iota, b), direction=EQ
  h2 = f32[3,5,7] convert(c2)
  lookup = f32[3,5,4] dot(h, e), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  lookup_t = f32[4,3,5] dot(et, h2), lhs_contracting_dims={1}, rhs_contracting_dims={2}
  grad = f32[4,7] dot(g, h), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  grad_t = f32[7,4] dot(h2, g2), lhs_contracting_dims={1,0}, rhs_contracting_dims={1,2}
  ge = pred[3,5,7] compare(b, iota), direction=GE
  steps = f32[3,5,7] convert(ge)
  not_one_hot = f32[3,5,4] dot(steps, e), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  ROOT out = (f32[3,5,4], f32[4,3,5], f32[4,7], f32[7,4], f32[3,5,4])
    tuple(lookup, lookup_t, grad, grad_t, not_one_hot)
}
)";

// Whole-number values, so the scatter's sums are exact in any order; ids
// outside [0, 7) on both sides; a NaN in row 3 and an inf in row 5 of the
// tables, and an inf in one gradient row.
std::vector<hlo::Literal> Args() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> e(28), et(28), g(60), g2(60);
  for (int i = 0; i < 28; ++i) e[static_cast<size_t>(i)] = static_cast<float>(i % 9 - 4);
  e[3 * 4 + 1] = nan;
  e[5 * 4 + 2] = inf;
  for (int r = 0; r < 7; ++r) {
    for (int w = 0; w < 4; ++w) et[static_cast<size_t>(w * 7 + r)] = e[static_cast<size_t>(r * 4 + w)];
  }
  for (int i = 0; i < 60; ++i) {
    g[static_cast<size_t>(i)] = static_cast<float>(i % 7 - 3);
    g2[static_cast<size_t>(i)] = static_cast<float>(i % 5 - 2);
  }
  g[17] = inf;
  g2[23] = -inf;
  const std::vector<int32_t> ids = {0, 1, 2, -1, 6, 7, 2, 5, 4, 1, 0, 100, 6, 6, 1};
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::FromValues<int32_t>({3, 5}, ids));
  args.push_back(hlo::Literal::FromValues<float>({7, 4}, e));
  args.push_back(hlo::Literal::FromValues<float>({4, 7}, et));
  args.push_back(hlo::Literal::FromValues<float>({3, 5, 4}, g));
  args.push_back(hlo::Literal::FromValues<float>({4, 5, 3}, g2));
  return args;
}

TEST(OneHotDotsTest, ProductsWithAOneHotBecomeGathersAndScatters) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kOneHotDots));
  ASSERT_OK_AND_ASSIGN(int64_t rewritten, RewriteOneHotDots(*module));
  EXPECT_EQ(rewritten, 4);
  ASSERT_OK(hlo::VerifyModule(*module));
  const std::string text = hlo::PrintModule(*module);
  EXPECT_THAT(text, HasSubstr("gather("));
  EXPECT_THAT(text, HasSubstr("scatter("));
  EXPECT_THAT(text, Not(HasSubstr("%lookup = f32[3,5,4] dot(")));
  EXPECT_THAT(text, Not(HasSubstr("%grad = f32[4,7] dot(")));
  EXPECT_THAT(text, HasSubstr("%not_one_hot = f32[3,5,4] dot(%steps, %e)"));
  // The one-hots no dot reads any more are gone (h2's compare too).
  EXPECT_THAT(text, Not(HasSubstr("%h = ")));
  EXPECT_THAT(text, Not(HasSubstr("%c2 = ")));
  ASSERT_OK_AND_ASSIGN(int64_t again, RewriteOneHotDots(*module));
  EXPECT_EQ(again, 0);
}

TEST(OneHotDotsTest, ValuesAreTheDotsIncludingNonFiniteRowsAndOutOfRangeIds) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kOneHotDots));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(RewriteOneHotDots(*rewritten).status());
  const std::vector<hlo::Literal> args = Args();
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  // The rows the NaN and inf poison are really there to get right.
  int64_t nans = 0;
  for (int64_t i = 0; i < expected.element(0).num_elements(); ++i) {
    nans += std::isnan(expected.element(0).GetAsDouble(i)) ? 1 : 0;
  }
  EXPECT_EQ(nans, 15 + 15 - 1);  // columns 1 and 2 of every row but the inf's own
  ASSERT_OK_AND_ASSIGN(hlo::Literal interpreted, hlo::Evaluate(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, interpreted, 0, 0, "interpreter"));
  ASSERT_OK(FuseModule(*rewritten).status());
  ASSERT_OK_AND_ASSIGN(hlo::Literal compiled, testing_util::RunWithHalideFactory(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, compiled, 0, 0, "halide"));
}

TEST(OneHotDotsTest, RandomValuesMatchTheDots) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kOneHotDots));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(RewriteOneHotDots(*rewritten).status());
  ASSERT_OK(FuseModule(*rewritten).status());
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, seed, -3, 3, /*small_ints=*/true);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*rewritten, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "random"));
  }
}

// In bf16 a lookup is one row, exact; a sum of rows is not (a scatter
// rounds after each addition), so the gradient stays a dot.
TEST(OneHotDotsTest, Bf16LookupsAreRewrittenAndBf16SumsAreNot) {
  constexpr const char* kBf16 = R"(
HloModule one_hot_bf16
ENTRY main {
  ids = s32[6] parameter(0)
  e = bf16[5,3] parameter(1)
  g = bf16[6,3] parameter(2)
  iota = s32[6,5] iota(), iota_dimension=1
  b = s32[6,5] broadcast(ids), dimensions={0}
  c = pred[6,5] compare(b, iota), direction=EQ
  h = bf16[6,5] convert(c)
  lookup = bf16[6,3] dot(h, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  grad = bf16[5,3] dot(h, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT out = (bf16[6,3], bf16[5,3]) tuple(lookup, grad)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kBf16));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK_AND_ASSIGN(int64_t n, RewriteOneHotDots(*rewritten));
  EXPECT_EQ(n, 1);
  const std::string text = hlo::PrintModule(*rewritten);
  EXPECT_THAT(text, Not(HasSubstr("%lookup = bf16[6,3] dot(")));
  EXPECT_THAT(text, HasSubstr("%grad = bf16[5,3] dot(%h, %g)"));
  for (uint64_t seed : {4, 5}) {
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, seed, -3, 3, /*small_ints=*/true);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, hlo::Evaluate(*rewritten, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "bf16"));
  }
}

// A u8 iota over 300 classes wraps: its "one-hot" has a 1 at v and at
// v + 256, so it is no lookup and stays a dot; 256 classes fit, and ids of
// 255 are in range.
TEST(OneHotDotsTest, AnIotaTooNarrowForItsClassesIsNoOneHot) {
  constexpr const char* kNarrow = R"(
HloModule narrow
ENTRY main {
  ids = u8[4] parameter(0)
  e = f32[CLASSES,2] parameter(1)
  iota = u8[4,CLASSES] iota(), iota_dimension=1
  b = u8[4,CLASSES] broadcast(ids), dimensions={0}
  c = pred[4,CLASSES] compare(b, iota), direction=EQ
  h = f32[4,CLASSES] convert(c)
  ROOT lookup = f32[4,2] dot(h, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  for (const char* classes : {"300", "256"}) {
    const std::string text = absl::StrReplaceAll(kNarrow, {{"CLASSES", classes}});
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
    std::unique_ptr<hlo::Module> rewritten = module->Clone();
    ASSERT_OK_AND_ASSIGN(int64_t n, RewriteOneHotDots(*rewritten));
    EXPECT_EQ(n, std::string(classes) == "256" ? 1 : 0) << classes;
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 6);
    args[0] = hlo::Literal::FromValues<uint8_t>({4}, std::vector<uint8_t>{0, 44, 255, 3});
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, hlo::Evaluate(*rewritten, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, classes));
  }
}

}  // namespace
}  // namespace sharc::codegen
