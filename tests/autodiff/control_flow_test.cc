// Control flow in both modes: calls, conditionals (pred and indexed) and fori
// while loops, checked against finite differences like the single ops; a
// loop's reverse mode saves per-iteration residuals (the printed VJP stacks
// them with dynamic-update-slice); forward mode also runs loops without a
// static trip count, which reverse mode refuses with the while named.
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
using testing::CheckDerivatives;

constexpr char kCall[] = R"(HloModule call
%g {
  %x = f64[3] parameter(0)
  %y = f64[3] parameter(1)
  %s = f64[3] sine(%x)
  ROOT %m = f64[3] multiply(%s, %y)
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %b = f64[3] parameter(1)
  %c = f64[3] call(%a, %b), to_apply=%g
  ROOT %d = f64[3] call(%c, %a), to_apply=%g
}
)";

constexpr char kPredConditional[] = R"(HloModule cond
%add {
  %x = f64[] parameter(0)
  %y = f64[] parameter(1)
  ROOT %s = f64[] add(%x, %y)
}
%t {
  %p = (f64[3], f64[3]) parameter(0)
  %x = f64[3] get-tuple-element(%p), index=0
  %y = f64[3] get-tuple-element(%p), index=1
  %e = f64[3] exponential(%x)
  ROOT %m = f64[3] multiply(%e, %y)
}
%f {
  %p = f64[3] parameter(0)
  ROOT %l = f64[3] log(%p)
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %b = f64[3] parameter(1)
  %zero = f64[] constant(0)
  %ra = f64[] reduce(%a, %zero), dimensions={0}, to_apply=%add
  %rb = f64[] reduce(%b, %zero), dimensions={0}, to_apply=%add
  %k = pred[] compare(%ra, %rb), direction=GT
  %ab = (f64[3], f64[3]) tuple(%a, %b)
  ROOT %r = f64[3] conditional(%k, %ab, %b), true_computation=%t, false_computation=%f
}
)";

constexpr char kIndexedConditional[] = R"(HloModule indexed
%b0 {
  %p = f64[2] parameter(0)
  ROOT %s = f64[2] sine(%p)
}
%b1 {
  %p = f64[2] parameter(0)
  ROOT %m = f64[2] multiply(%p, %p)
}
%b2 {
  %p = f64[3] parameter(0)
  ROOT %s = f64[2] slice(%p), slice={[0:2]}
}
ENTRY %main {
  %a = f64[2] parameter(0)
  %c = f64[3] parameter(1)
  %i0 = s32[] constant(0)
  %i1 = s32[] constant(1)
  %i2 = s32[] constant(2)
  %x = f64[2] conditional(%i1, %a, %a, %c), branch_computations={%b0, %b1, %b2}
  %y = f64[2] conditional(%i2, %a, %x, %c), branch_computations={%b0, %b1, %b2}
  %z = f64[2] conditional(%i0, %y, %x, %c), branch_computations={%b0, %b1, %b2}
  ROOT %r = (f64[2], f64[2]) tuple(%y, %z)
}
)";

// x <- sin(x) * w + x, four times.
constexpr char kForiLoop[] = R"(HloModule fori
%body {
  %c = (s32[], f64[3], f64[3]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %x = f64[3] get-tuple-element(%c), index=1
  %w = f64[3] get-tuple-element(%c), index=2
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %s = f64[3] sine(%x)
  %m = f64[3] multiply(%s, %w)
  %x1 = f64[3] add(%m, %x)
  ROOT %t = (s32[], f64[3], f64[3]) tuple(%i1, %x1, %w)
}
%cond {
  %c = (s32[], f64[3], f64[3]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(6)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
ENTRY %main {
  %a = f64[3] parameter(0)
  %w = f64[3] parameter(1)
  %two = s32[] constant(2)
  %init = (s32[], f64[3], f64[3]) tuple(%two, %a, %w)
  %loop = (s32[], f64[3], f64[3]) while(%init), condition=%cond, body=%body
  ROOT %r = f64[3] get-tuple-element(%loop), index=1
}
)";

TEST(ControlFlowTest, Call) {
  auto m = testing::Parse(kCall);
  ASSERT_NE(m, nullptr);
  for (uint64_t seed : {1, 2}) CheckDerivatives(*m, seed, "call");
}

TEST(ControlFlowTest, PredConditional) {
  auto m = testing::Parse(kPredConditional);
  ASSERT_NE(m, nullptr);
  for (uint64_t seed : {1, 2, 3, 4}) CheckDerivatives(*m, seed, "pred conditional");
}

TEST(ControlFlowTest, IndexedConditional) {
  auto m = testing::Parse(kIndexedConditional);
  ASSERT_NE(m, nullptr);
  CheckDerivatives(*m, 5, "indexed conditional");
}

TEST(ControlFlowTest, ForiWhileLoop) {
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  for (uint64_t seed : {1, 2}) CheckDerivatives(*m, seed, "fori while");
}

TEST(ControlFlowTest, ReverseModeStacksLoopResiduals) {
  auto m = testing::Parse(kForiLoop);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(hlo::Computation * vjp, Vjp(*m, *m->entry()));
  m->set_entry(vjp);
  const std::string text = hlo::PrintModule(*m);
  // Four iterations' residuals saved in buffers indexed by the counter.
  EXPECT_THAT(text, HasSubstr("f64[4,3] dynamic-update-slice("));
  EXPECT_THAT(text, HasSubstr("dynamic-slice("));
}

constexpr char kDynamicLoop[] = R"(HloModule dynamic
%body {
  %x = f64[] parameter(0)
  ROOT %y = f64[] multiply(%x, %x)
}
%cond {
  %x = f64[] parameter(0)
  %ten = f64[] constant(10)
  ROOT %lt = pred[] compare(%x, %ten), direction=LT
}
ENTRY %main {
  %a = f64[] parameter(0)
  ROOT %w = f64[] while(%a), condition=%cond, body=%body
}
)";

// Forward mode needs no trip count: x -> x^2 until x >= 10.
TEST(ControlFlowTest, ForwardModeThroughDataDependentLoop) {
  auto m = testing::Parse(kDynamicLoop);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  auto reparsed = testing::Reparse(*jvp);
  ASSERT_NE(reparsed, nullptr);
  for (double x : {1.5, 2.5, 4.0}) {  // 3, 2 and 1 squarings
    const double eps = 1e-7;
    const double numeric = (testing::Run(*m, {Literal::Scalar(x + eps)}).GetAsDouble(0) -
                            testing::Run(*m, {Literal::Scalar(x - eps)}).GetAsDouble(0)) /
                           (2 * eps);
    Literal out = testing::Run(*reparsed, {Literal::Scalar(x), Literal::Scalar(1.0)});
    EXPECT_NEAR(out.element(1).GetAsDouble(0), numeric, 1e-5 * std::abs(numeric)) << x;
  }
}

TEST(ControlFlowTest, ReverseModeNeedsStaticTripCount) {
  auto m = testing::Parse(kDynamicLoop);
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(GradModule(*m), sharc::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                      HasSubstr("while is differentiable only "
                                                                "with a static trip count")));
}

}  // namespace
}  // namespace sharc::autodiff
