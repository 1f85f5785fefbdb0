// Derivatives that pick one element where several qualify: max/min pooling
// (ties go to the first element of the window, as XLA's select-and-scatter
// with GE picks), overwriting scatter (of duplicate indices, the update the
// interpreter applies last gets the cotangent) and argmax (the value output
// differentiates like max, the index output not at all). Finite differences
// cannot check ties, so these tests compare exact gradients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

std::vector<double> Values(const Literal& l) {
  std::vector<double> out;
  for (int64_t i = 0; i < l.num_elements(); ++i) out.push_back(l.GetAsDouble(i));
  return out;
}

Literal Vector(std::vector<double> values) { return Literal::Vector<double>(values); }

// The VJP of `text`'s entry at x for cotangent ct: (f(x), ct·df/dx_0, ...).
Literal VjpAt(const std::string& text, const std::vector<Literal>& args) {
  auto module = testing::Parse(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return Literal();
  auto vjp = Vjp(*module, *module->entry());
  EXPECT_TRUE(vjp.ok()) << vjp.status();
  if (!vjp.ok()) return Literal();
  module->set_entry(*vjp);
  auto reparsed = testing::Reparse(*module);
  EXPECT_NE(reparsed, nullptr);
  if (reparsed == nullptr) return Literal();
  return testing::Run(*reparsed, args);
}

constexpr char kPoolReducers[] = R"(HloModule pool
%max {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %m = f64[] maximum(%a, %b)
}
%min {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %m = f64[] minimum(%a, %b)
}
)";

TEST(SelectionGradientsTest, MaxPoolTiesGoToTheFirstElement) {
  const std::string text = absl::StrCat(kPoolReducers, R"(ENTRY %main {
  %x = f64[5] parameter(0)
  %ninf = f64[] constant(-inf)
  ROOT %r = f64[4] reduce-window(%x, %ninf), window={size=2}, to_apply=%max
}
)");
  // Windows [x0,x1] = [1,3], [x1,x2] = [3,3], [x2,x3] = [3,2], [x3,x4] =
  // [2,2]: the tied windows send their cotangent to x1 and x3, the first of
  // each pair, never to x4.
  Literal out = VjpAt(text, {Vector({1, 3, 3, 2, 2}), Vector({1, 10, 100, 1000})});
  EXPECT_THAT(Values(out.element(0)), ::testing::ElementsAre(3, 3, 3, 2));
  EXPECT_THAT(Values(out.element(1)), ::testing::ElementsAre(0, 11, 100, 1000, 0));
}

TEST(SelectionGradientsTest, MinPoolTiesGoToTheFirstElement) {
  const std::string text = absl::StrCat(kPoolReducers, R"(ENTRY %main {
  %x = f64[4] parameter(0)
  %inf = f64[] constant(inf)
  ROOT %r = f64[2] reduce-window(%x, %inf), window={size=3 stride=1}, to_apply=%min
}
)");
  Literal out = VjpAt(text, {Vector({2, 1, 1, 1}), Vector({1, 10})});
  EXPECT_THAT(Values(out.element(1)), ::testing::ElementsAre(0, 11, 0, 0));
}

// The init value of a max pool competes before the window's elements and
// keeps the cotangent unless an element beats it strictly: here the windows
// over padding only, the one whose element is below it, and the tie.
TEST(SelectionGradientsTest, MaxPoolInitValueWinsOnlyStrictly) {
  const std::string text = absl::StrCat(kPoolReducers, R"(ENTRY %main {
  %x = f64[3] parameter(0)
  %z = f64[] parameter(1)
  ROOT %r = f64[5] reduce-window(%x, %z), window={size=1 pad=1_1}, to_apply=%max
}
)");
  Literal out = VjpAt(text, {Vector({1, 2, 3}), Literal::Scalar(2.0), Vector({1, 10, 100, 1000, 10000})});
  EXPECT_THAT(Values(out.element(0)), ::testing::ElementsAre(2, 2, 2, 3, 2));
  EXPECT_THAT(Values(out.element(1)), ::testing::ElementsAre(0, 0, 1000));
  EXPECT_THAT(Values(out.element(2)), ::testing::ElementsAre(1 + 10 + 100 + 10000));
}

// Against a direct implementation of XLA's select-and-scatter (select = GE,
// scatter = add) on inputs with many ties, for 2-D windows with strides and
// padding.
TEST(SelectionGradientsTest, MaxPoolGradientIsSelectAndScatter) {
  const std::string text = absl::StrCat(kPoolReducers, R"(ENTRY %main {
  %x = f64[7,6] parameter(0)
  %ninf = f64[] constant(-inf)
  ROOT %r = f64[4,3] reduce-window(%x, %ninf), window={size=3x3 stride=2x2 pad=1_1x1_0}, to_apply=%max
}
)");
  const int64_t rows = 7, cols = 6, out_rows = 4, out_cols = 3;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> small(0, 2);  // three values: ties everywhere
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> x(rows * cols), ct(out_rows * out_cols);
    for (double& v : x) v = small(rng);
    for (double& v : ct) v = uniform(rng);
    std::vector<double> expected(x.size(), 0.0);
    for (int64_t o = 0; o < out_rows; ++o) {
      for (int64_t p = 0; p < out_cols; ++p) {
        int64_t chosen = -1;
        for (int64_t i = 0; i < 3; ++i) {
          for (int64_t j = 0; j < 3; ++j) {
            const int64_t r = o * 2 + i - 1, c = p * 2 + j - 1;
            if (r < 0 || r >= rows || c < 0 || c >= cols) continue;
            // GE keeps the current selection on ties.
            if (chosen < 0 || !(x[chosen] >= x[r * cols + c])) chosen = r * cols + c;
          }
        }
        expected[chosen] += ct[o * out_cols + p];
      }
    }
    Literal out = VjpAt(text, {Literal::FromValues<double>({rows, cols}, x),
                               Literal::FromValues<double>({out_rows, out_cols}, ct)});
    std::vector<double> actual = Values(out.element(1));
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_DOUBLE_EQ(actual[i], expected[i]) << "trial " << trial << " element " << i;
    }
  }
}

constexpr char kOverwrite[] = R"(HloModule scatter
%overwrite {
  %current = f64[] parameter(0)
  ROOT %update = f64[] parameter(1)
}
ENTRY %main {
  %x = f64[5] parameter(0)
  %u = f64[4] parameter(1)
  %i = s32[4,1] constant({{1}, {1}, {3}, {7}})
  ROOT %r = f64[5] scatter(%x, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%overwrite
}
)";

// Updates 0 and 1 both write x1; the interpreter applies them in order, so
// update 1 survives and alone gets the cotangent there. Update 3 is out of
// bounds and skipped: no cotangent. The operand gets the cotangent where no
// update landed.
TEST(SelectionGradientsTest, OverwriteScatterDuplicatesGoToTheSurvivingUpdate) {
  Literal out = VjpAt(kOverwrite, {Vector({1, 2, 3, 4, 5}), Vector({10, 20, 30, 40}),
                                   Vector({1, 2, 3, 4, 5})});
  EXPECT_THAT(Values(out.element(0)), ::testing::ElementsAre(1, 20, 3, 30, 5));
  EXPECT_THAT(Values(out.element(1)), ::testing::ElementsAre(1, 0, 3, 0, 5));
  EXPECT_THAT(Values(out.element(2)), ::testing::ElementsAre(0, 2, 4, 0));
}

TEST(SelectionGradientsTest, OverwriteScatterForwardModeFollowsTheSurvivingUpdate) {
  auto module = testing::Parse(kOverwrite);
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*module));
  Literal out = testing::Run(*jvp, {Vector({1, 2, 3, 4, 5}), Vector({10, 20, 30, 40}),
                                    Vector({1, 1, 1, 1, 1}), Vector({2, 3, 4, 5})});
  EXPECT_THAT(Values(out.element(1)), ::testing::ElementsAre(1, 3, 1, 4, 1));
}

constexpr char kArgmax[] = R"(HloModule argmax
%argmax {
  %av = f64[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f64[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %eq = pred[] compare(%av, %bv), direction=EQ
  %lt = pred[] compare(%ai, %bi), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f64[] select(%pick, %av, %bv)
  %i = s32[] select(%pick, %ai, %bi)
  ROOT %t = (f64[], s32[]) tuple(%v, %i)
}
ENTRY %main {
  %x = f64[2,5] parameter(0)
  %iota = s32[2,5] iota(), iota_dimension=1
  %ninf = f64[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f64[2], s32[2]) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax
}
)";

TEST(SelectionGradientsTest, ArgmaxValueDifferentiatesLikeMaxIndexNotAtAll) {
  auto module = testing::Parse(kArgmax);
  ASSERT_NE(module, nullptr);
  Literal x = Literal::FromValues<double>({2, 5}, std::vector<double>{2, 5, 5, 1, 0, 7, 1, 2, 3, 4});
  Literal t = Literal::FromValues<double>({2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*module));
  Literal out = testing::Run(*jvp, {x, t});
  EXPECT_THAT(Values(out.element(0).element(0)), ::testing::ElementsAre(5, 7));
  EXPECT_THAT(Values(out.element(0).element(1)), ::testing::ElementsAre(1, 0));
  // The tie in row 0 goes to the lower index, as the reducer says.
  EXPECT_THAT(Values(out.element(1).element(0)), ::testing::ElementsAre(2, 6));
  EXPECT_THAT(Values(out.element(1).element(1)), ::testing::ElementsAre(0, 0));

  Literal ct = Literal::Tuple({Vector({1, 10}), Literal::FromValues<int32_t>({2}, std::vector<int32_t>{0, 0})});
  Literal back = VjpAt(kArgmax, {x, ct});
  EXPECT_THAT(Values(back.element(1)), ::testing::ElementsAre(0, 1, 0, 0, 0, 10, 0, 0, 0, 0));
}

// The derivatives above are programs of ordinary ops, so they differentiate
// again: the gradient of a loss through max pooling, argmax, a product
// reduction and an overwriting scatter, checked in both modes against
// finite differences of the gradient itself.
TEST(SelectionGradientsTest, SecondOrder) {
  auto module = testing::Parse(R"(HloModule second_order
%max {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %m = f64[] maximum(%a, %b)
}
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %m = f64[] add(%a, %b)
}
%mul {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %m = f64[] multiply(%a, %b)
}
%overwrite {
  %current = f64[] parameter(0)
  ROOT %update = f64[] parameter(1)
}
%argmax {
  %av = f64[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f64[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %v = f64[] select(%gt, %av, %bv)
  %i = s32[] select(%gt, %ai, %bi)
  ROOT %t = (f64[], s32[]) tuple(%v, %i)
}
ENTRY %main {
  %x = f64[6] parameter(0)
  %u = f64[2] parameter(1)
  %idx = s32[2,1] constant({{4}, {4}})
  %s = f64[6] scatter(%x, %idx, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%overwrite
  %sq = f64[6] multiply(%s, %s)
  %ninf = f64[] constant(-inf)
  %pool = f64[3] reduce-window(%sq, %ninf), window={size=3 stride=2 pad=0_1}, to_apply=%max
  %one = f64[] constant(1)
  %prod = f64[] reduce(%pool, %one), dimensions={0}, to_apply=%mul
  %iota = s32[6] iota(), iota_dimension=0
  %zero = s32[] constant(0)
  %am = (f64[], s32[]) reduce(%sq, %iota, %ninf, %zero), dimensions={0}, to_apply=%argmax
  %top = f64[] get-tuple-element(%am), index=0
  %t = f64[] multiply(%top, %top)
  ROOT %l = f64[] add(%prod, %t)
}
)");
  ASSERT_NE(module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*module));
  for (uint64_t seed : {1, 2, 3}) testing::CheckDerivatives(*grad, seed, "gradient");
}

}  // namespace
}  // namespace sharc::autodiff
