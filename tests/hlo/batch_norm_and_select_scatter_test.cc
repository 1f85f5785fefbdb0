// batch-norm-training/-inference/-grad and select-and-scatter: results
// computed by hand, and the verifier's errors.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/base/status_macros.h"
#include "hlo/eval/interpreter.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

std::vector<float> Floats(const Literal& l) {
  return std::vector<float>(l.data<float>().begin(), l.data<float>().end());
}

absl::StatusOr<Literal> EvaluateText(const std::string& text, std::vector<Literal> args) {
  ASSIGN_OR_RETURN(auto module, ParseAndVerifyModule(text));
  // The printed form reads back the same.
  ASSIGN_OR_RETURN(auto again, ParseAndVerifyModule(PrintModule(*module)));
  if (PrintModule(*again) != PrintModule(*module)) return absl::InternalError("not a fixed point");
  return Evaluate(*module, args);
}

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

Literal Matrix(std::vector<int64_t> dims, std::vector<float> values) {
  return Literal::FromValues<float>(std::move(dims), values);
}

TEST(BatchNormTest, TrainingNormalizesEachFeatureWithItsBiasedVariance) {
  // Feature 0 holds {1, 3}: mean 2, variance 1; feature 1 {2, 6}: mean 4,
  // variance 4. y = (x - mean) / sqrt(variance) * scale + offset.
  ASSERT_OK_AND_ASSIGN(Literal out, EvaluateText(R"(HloModule m
ENTRY %e {
  %x = f32[2,2] parameter(0)
  %scale = f32[2] constant({2, 3})
  %offset = f32[2] constant({10, 20})
  ROOT %bn = (f32[2,2], f32[2], f32[2]) batch-norm-training(%x, %scale, %offset), epsilon=0, feature_index=1
})",
                                        {Matrix({2, 2}, {1, 2, 3, 6})}));
  EXPECT_THAT(Floats(out.element(0)), ElementsAre(8, 17, 12, 23));
  EXPECT_THAT(Floats(out.element(1)), ElementsAre(2, 4));
  EXPECT_THAT(Floats(out.element(2)), ElementsAre(1, 4));
}

TEST(BatchNormTest, InferenceUsesTheGivenMomentsAndEpsilon) {
  // variance + epsilon = {4, 9}: x / 2 * 2 + 10 and x / 3 * 3 + 20.
  ASSERT_OK_AND_ASSIGN(Literal out, EvaluateText(R"(HloModule m
ENTRY %e {
  %x = f32[2,2] parameter(0)
  %scale = f32[2] constant({2, 3})
  %offset = f32[2] constant({10, 20})
  %mean = f32[2] constant({0, 0})
  %var = f32[2] constant({3, 8})
  ROOT %bn = f32[2,2] batch-norm-inference(%x, %scale, %offset, %mean, %var), epsilon=1, feature_index=1
})",
                                        {Matrix({2, 2}, {1, 2, 3, 6})}));
  EXPECT_THAT(Floats(out), ElementsAre(11, 22, 13, 26));
}

TEST(BatchNormTest, GradMatchesTheHandDerivedGradient) {
  // One feature {0, 3, 6} with mean 3, variance + epsilon = 9 (rstd 1/3),
  // scale 2, dy = {1, 0, 0}:
  //   dx_i = scale * rstd * (dy_i - mean(dy) - xc_i * mean(dy * xc) * rstd^2)
  //        = 2/3 * (dy_i - 1/3 + xc_i / 9) = {2/9, -2/9, 0},
  //   dscale = sum(dy * xc) * rstd = -1, doffset = sum(dy) = 1.
  ASSERT_OK_AND_ASSIGN(Literal out, EvaluateText(R"(HloModule m
ENTRY %e {
  %x = f32[3,1] parameter(0)
  %dy = f32[3,1] parameter(1)
  %scale = f32[1] constant({2})
  %mean = f32[1] constant({3})
  %var = f32[1] constant({6})
  ROOT %g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(%x, %scale, %mean, %var, %dy), epsilon=3, feature_index=1
})",
                                        {Matrix({3, 1}, {0, 3, 6}), Matrix({3, 1}, {1, 0, 0})}));
  EXPECT_THAT(Floats(out.element(0)),
              ElementsAre(FloatNear(2.0f / 9, 1e-6f), FloatNear(-2.0f / 9, 1e-6f),
                          FloatNear(0, 1e-6f)));
  EXPECT_THAT(Floats(out.element(1)), ElementsAre(FloatNear(-1, 1e-6f)));
  EXPECT_THAT(Floats(out.element(2)), ElementsAre(1));
}

// The expansion into primitive ops (what runs, partitions and
// differentiates) gives the evaluator's values.
TEST(BatchNormTest, ExpansionMatchesTheEvaluator) {
  constexpr char kAll[] = R"(HloModule m
ENTRY %e {
  %x = f32[4,3,2] parameter(0)
  %dy = f32[4,3,2] parameter(1)
  %s = f32[3] constant({1.5, -0.5, 2})
  %o = f32[3] constant({0.25, 1, -3})
  %t = (f32[4,3,2], f32[3], f32[3]) batch-norm-training(%x, %s, %o), epsilon=0.001, feature_index=1
  %mean = f32[3] get-tuple-element(%t), index=1
  %var = f32[3] get-tuple-element(%t), index=2
  %i = f32[4,3,2] batch-norm-inference(%x, %s, %o, %mean, %var), epsilon=0.5, feature_index=1
  %g = (f32[4,3,2], f32[3], f32[3]) batch-norm-grad(%x, %s, %mean, %var, %dy), epsilon=0.001, feature_index=1
  ROOT %r = ((f32[4,3,2], f32[3], f32[3]), f32[4,3,2], (f32[4,3,2], f32[3], f32[3])) tuple(%t, %i, %g)
})";
  std::vector<float> x, dy;
  for (int i = 0; i < 24; ++i) {
    x.push_back(static_cast<float>((i * 7) % 11) - 4.5f);
    dy.push_back(static_cast<float>((i * 5) % 7) * 0.25f - 0.5f);
  }
  std::vector<Literal> args;
  args.push_back(Matrix({4, 3, 2}, x));
  args.push_back(Matrix({4, 3, 2}, dy));
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kAll));
  ASSERT_OK_AND_ASSIGN(Literal expected, Evaluate(*module, args));
  ASSERT_OK(LowerForCompute(*module));
  const std::string lowered = PrintModule(*module);
  EXPECT_THAT(lowered, ::testing::Not(HasSubstr("batch-norm")));
  ASSERT_OK(ParseAndVerifyModule(lowered).status());
  ASSERT_OK_AND_ASSIGN(Literal actual, Evaluate(*module, args));
  auto expect_near = [](const Literal& a, const Literal& b, const std::string& what) {
    std::vector<float> va = Floats(a), vb = Floats(b);
    ASSERT_EQ(va.size(), vb.size()) << what;
    for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 1e-4f) << what << " " << i;
  };
  for (int64_t k = 0; k < 3; ++k) {
    expect_near(expected.element(0).element(k), actual.element(0).element(k), "training");
    expect_near(expected.element(2).element(k), actual.element(2).element(k), "grad");
  }
  expect_near(expected.element(1), actual.element(1), "inference");
}

TEST(BatchNormTest, VerifierNamesTheProblem) {
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %s = f32[2] parameter(1)
  ROOT %bn = (f32[2,3], f32[2], f32[2]) batch-norm-training(%x, %s, %s), epsilon=0.001, feature_index=1
})"),
              HasSubstr("operand 1 is f32[2]; expected f32[3]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %s = f32[3] parameter(1)
  ROOT %bn = (f32[2,3], f32[3], f32[3]) batch-norm-training(%x, %s, %s), epsilon=0.001, feature_index=2
})"),
              HasSubstr("feature_index 2 is outside the operand's rank 2"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %s = f32[3] parameter(1)
  ROOT %bn = (f32[2,3], f32[3], f32[3]) batch-norm-training(%x, %s, %s), epsilon=small, feature_index=1
})"),
              HasSubstr("epsilon must be a non-negative number, got 'small'"));
}

constexpr char kSelectAndScatter[] = R"(HloModule m
%ge (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[4] parameter(0)
  %src = f32[SRC] parameter(1)
  %zero = f32[] constant(0)
  ROOT %r = f32[4] select-and-scatter(%x, %src, %zero), window={WINDOW}, select=%ge, scatter=%add
})";

std::string SelectAndScatter(const std::string& src, const std::string& window) {
  std::string text = kSelectAndScatter;
  text.replace(text.find("SRC"), 3, src);
  text.replace(text.find("WINDOW"), 6, window);
  return text;
}

TEST(SelectAndScatterTest, ScattersEachSourceValueToItsWindowsMaximum) {
  // Max-pool's gradient: windows {1, 5} and {3, 2} pick 5 and 3.
  ASSERT_OK_AND_ASSIGN(Literal pooled, EvaluateText(SelectAndScatter("2", "size=2 stride=2"),
                                           {Literal::Vector<float>({1, 5, 3, 2}),
                                            Literal::Vector<float>({10, 20})}));
  EXPECT_THAT(Floats(pooled), ElementsAre(0, 10, 20, 0));
  // Overlapping windows {1,5}, {5,3}, {3,2}: 5 is picked twice and sums.
  ASSERT_OK_AND_ASSIGN(Literal overlap, EvaluateText(SelectAndScatter("3", "size=2"),
                                            {Literal::Vector<float>({1, 5, 3, 2}),
                                             Literal::Vector<float>({1, 2, 4})}));
  EXPECT_THAT(Floats(overlap), ElementsAre(0, 3, 4, 0));
  // Ties keep the first element (GE holds for the one already selected).
  ASSERT_OK_AND_ASSIGN(Literal ties, EvaluateText(SelectAndScatter("2", "size=2 stride=2"),
                                         {Literal::Vector<float>({3, 3, 1, 4}),
                                          Literal::Vector<float>({10, 20})}));
  EXPECT_THAT(Floats(ties), ElementsAre(10, 0, 0, 20));
  // Padding is never selected: windows {pad, 2} and {2, 7}.
  ASSERT_OK_AND_ASSIGN(Literal padded, EvaluateText(SelectAndScatter("2", "size=2 stride=2 pad=1_0"),
                                           {Literal::Vector<float>({2, 2, 7, 1}),
                                            Literal::Vector<float>({10, 20})}));
  EXPECT_THAT(Floats(padded), ElementsAre(10, 0, 20, 0));
}

TEST(SelectAndScatterTest, VerifierNamesTheProblem) {
  EXPECT_THAT(VerifyError(SelectAndScatter("3", "size=2 stride=2")),
              HasSubstr("source f32[3] must have the dims of the windows [2]"));
  std::string bad_select = SelectAndScatter("2", "size=2 stride=2");
  bad_select.replace(bad_select.find("select=%ge"), 10, "select=%add");
  EXPECT_THAT(VerifyError(bad_select), HasSubstr("select"));
}

}  // namespace
}  // namespace sharc::hlo
