// Differentiating the MapReduce blocks (reference b.1 and b.6): the DrJAX
// primitive tests with 100 clients, the tutorial's federated loss and its
// gradient, and MapReduce closure: the printed derivatives are MapReduce
// programs again (forward mode keeps each block, reverse mode swaps
// broadcast and sum).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "hlo/text/printer.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::unique_ptr<Module> VjpOf(const Module& m) {
  std::unique_ptr<Module> copy = m.Clone();
  auto vjp = Vjp(*copy, *copy->entry());
  EXPECT_TRUE(vjp.ok()) << vjp.status();
  if (!vjp.ok()) return nullptr;
  copy->set_entry(*vjp);
  return testing::Reparse(*copy);
}

constexpr char kBroadcast[] = R"(HloModule b, mesh={clients=2}
ENTRY %main {
  %x = f32[] parameter(0)
  ROOT %b = f32[100] mapreduce.broadcast(%x), placement=clients
}
)";

TEST(MapReduceTest, BroadcastJacobiansAreOnes) {
  auto m = testing::Parse(kBroadcast);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  EXPECT_THAT(hlo::PrintModule(*jvp), HasSubstr("mapreduce.broadcast("));
  Literal out = testing::Run(*jvp, {Literal::Scalar(1.0f), Literal::Scalar(1.0f)});
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(out.element(1).GetAsDouble(i), 1.0);
  // jacrev: row i is vjp(e_i).
  auto vjp = VjpOf(*m);
  ASSERT_NE(vjp, nullptr);
  EXPECT_THAT(hlo::PrintModule(*vjp), HasSubstr("mapreduce.sum("));
  for (int64_t i : {0, 37, 99}) {
    Literal e(hlo::Shape(hlo::PrimitiveType::kF32, {100}));
    e.SetFromDouble(i, 1.0);
    Literal back = testing::Run(*vjp, {Literal::Scalar(1.0f), e});
    EXPECT_EQ(back.element(1).GetAsDouble(0), 1.0);
  }
}

TEST(MapReduceTest, GradOfSumOfBroadcastIs100) {
  auto m = testing::Parse(R"(HloModule s, mesh={clients=2}
ENTRY %main {
  %x = f32[] parameter(0)
  %b = f32[100] mapreduce.broadcast(%x), placement=clients
  ROOT %s = f32[] mapreduce.sum(%b), placement=clients
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*m));
  Literal g = testing::Run(*testing::Reparse(*grad), {Literal::Scalar(1.0f)});
  EXPECT_EQ(g.element(0).GetAsDouble(0), 100.0);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  EXPECT_THAT(hlo::PrintModule(*jvp), HasSubstr("mapreduce.sum("));
  Literal out = testing::Run(*jvp, {Literal::Scalar(1.0f), Literal::Scalar(1.0f)});
  EXPECT_EQ(out.element(1).GetAsDouble(0), 100.0);
}

TEST(MapReduceTest, MeanGradientsAreOneHundredth) {
  auto m = testing::Parse(R"(HloModule mean, mesh={clients=2}
ENTRY %main {
  %x = f32[100,1] parameter(0)
  ROOT %m = f32[1] mapreduce.mean(%x), placement=clients
}
)");
  ASSERT_NE(m, nullptr);
  auto vjp = VjpOf(*m);
  ASSERT_NE(vjp, nullptr);
  EXPECT_THAT(hlo::PrintModule(*vjp), HasSubstr("mapreduce.broadcast("));
  Literal ones(hlo::Shape(hlo::PrimitiveType::kF32, {100, 1}));
  for (int64_t i = 0; i < 100; ++i) ones.SetFromDouble(i, 1.0);
  Literal back = testing::Run(*vjp, {ones, Literal::Vector<float>({1.0f})});
  EXPECT_EQ(back.element(0).GetAsDouble(0), 1.0);
  for (int64_t i = 0; i < 100; ++i) EXPECT_FLOAT_EQ(back.element(1).GetAsDouble(i), 0.01f);
  // jacfwd column j: the tangent e_j gives 0.01.
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  EXPECT_THAT(hlo::PrintModule(*jvp), HasSubstr("mapreduce.mean("));
  Literal e(hlo::Shape(hlo::PrimitiveType::kF32, {100, 1}));
  e.SetFromDouble(42, 1.0);
  Literal out = testing::Run(*jvp, {ones, e});
  EXPECT_FLOAT_EQ(out.element(1).GetAsDouble(0), 0.01f);

  // broadcast then mean is the identity: its derivative is 1.
  auto bm = testing::Parse(R"(HloModule bm, mesh={clients=2}
ENTRY %main {
  %x = f32[] parameter(0)
  %b = f32[100] mapreduce.broadcast(%x), placement=clients
  ROOT %m = f32[] mapreduce.mean(%b), placement=clients
}
)");
  ASSERT_NE(bm, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*bm));
  // 100 f32 copies of 0.01 add up to 1 up to rounding.
  EXPECT_NEAR(testing::Run(*grad, {Literal::Scalar(1.0f)}).element(0).GetAsDouble(0), 1.0, 1e-6);
}

// The tutorial (reference b.6): loss = mean over 3 clients of
// 0.5 * (dot(w, y_i) - 1)^2.
constexpr char kFederatedLoss[] = R"(HloModule federated_loss, mesh={clients=3}
%loss {
  %w = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  %d = f32[] dot(%w, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %one = f32[] constant(1)
  %e = f32[] subtract(%d, %one)
  %sq = f32[] multiply(%e, %e)
  %half = f32[] constant(0.5)
  ROOT %l = f32[] multiply(%half, %sq)
}
ENTRY %main {
  %w = f32[2] parameter(0)
  %data = f32[3,2] parameter(1)
  %b = f32[3,2] mapreduce.broadcast(%w), placement=clients
  %l = f32[3] mapreduce.map(%b, %data), placement=clients, to_apply=%loss
  ROOT %m = f32[] mapreduce.mean(%l), placement=clients
}
)";

Literal TutorialData() {
  return Literal::FromValues<float>({3, 2}, std::vector<float>{1, 2, 3, -4, -7, 6});
}

TEST(MapReduceTest, TutorialLossAndGradient) {
  auto m = testing::Parse(kFederatedLoss);
  ASSERT_NE(m, nullptr);
  Literal w = Literal::Vector<float>({2, -1});
  EXPECT_NEAR(testing::Run(*m, {w, TutorialData()}).GetAsDouble(0), 87.16667, 1e-4);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*m, {0}));
  const std::string text = hlo::PrintModule(*grad);
  EXPECT_THAT(text, HasSubstr("mapreduce.broadcast("));
  EXPECT_THAT(text, HasSubstr("mapreduce.map("));
  EXPECT_THAT(text, HasSubstr("mapreduce.sum("));
  auto reparsed = testing::Reparse(*grad);
  ASSERT_NE(reparsed, nullptr);
  Literal g = testing::Run(*reparsed, {w, TutorialData()});
  EXPECT_NEAR(g.element(0).GetAsDouble(0), 57.666668, 1e-4);
  EXPECT_NEAR(g.element(0).GetAsDouble(1), -54.666668, 1e-4);
}

TEST(MapReduceTest, ForwardModeKeepsTheBlocks) {
  auto m = testing::Parse(kFederatedLoss);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  const std::string text = hlo::PrintModule(*jvp);
  EXPECT_THAT(text, HasSubstr("mapreduce.broadcast("));
  EXPECT_THAT(text, HasSubstr("mapreduce.map("));
  EXPECT_THAT(text, HasSubstr("mapreduce.mean("));
  // Directional derivative along (1, 0) of w, data fixed: the gradient's
  // first component.
  Literal out = testing::Run(*jvp, {Literal::Vector<float>({2, -1}), TutorialData(),
                                    Literal::Vector<float>({1, 0}),
                                    Literal(hlo::Shape(hlo::PrimitiveType::kF32, {3, 2}))});
  EXPECT_NEAR(out.element(1).GetAsDouble(0), 57.666668, 1e-4);
}

TEST(MapReduceTest, MapDerivativesMatchFiniteDifferences) {
  auto m = testing::Parse(R"(HloModule m, mesh={clients=2}
%f {
  %x = f64[2] parameter(0)
  %y = f64[2] parameter(1)
  %s = f64[2] sine(%x)
  %p = f64[2] multiply(%s, %y)
  %d = f64[] dot(%p, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT %t = (f64[2], f64[]) tuple(%p, %d)
}
ENTRY %main {
  %a = f64[4,2] parameter(0)
  %w = f64[2] parameter(1)
  %b = f64[4,2] mapreduce.broadcast(%w), placement=clients
  %r = (f64[4,2], f64[4]) mapreduce.map(%a, %b), placement=clients, to_apply=%f
  %p = f64[4,2] get-tuple-element(%r), index=0
  %d = f64[4] get-tuple-element(%r), index=1
  %s = f64[2] mapreduce.sum(%p), placement=clients
  %m = f64[] mapreduce.mean(%d), placement=clients
  ROOT %t = (f64[2], f64[]) tuple(%s, %m)
}
)");
  ASSERT_NE(m, nullptr);
  for (uint64_t seed : {1, 2}) testing::CheckDerivatives(*m, seed, "map");
}

}  // namespace
}  // namespace sharc::autodiff
