// The sign facts codegen proves about a kernel's values (codegen/value_sign.h):
// softmax's x - max(x) in the forms front ends write it, the cases that
// look alike but are not bounded, and the kernel boundary.
#include "codegen/value_sign.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

constexpr const char* kReducers = R"(
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
max_swapped { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(y, x) }
min { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] minimum(x, y) }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
)";

std::unique_ptr<hlo::Module> Parse(const std::string& entry) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> m =
      hlo::ParseAndVerifyModule(absl::StrCat("HloModule m\n", kReducers, "ENTRY main {\n", entry, "}\n"));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// The facts of instruction `name` when the whole entry is one kernel.
struct Facts {
  bool non_positive;
  bool non_negative;
};

Facts FactsOf(const hlo::Module& m, const std::string& name) {
  const hlo::Instruction* v = m.entry()->FindInstruction(name);
  EXPECT_NE(v, nullptr) << name;
  if (v == nullptr) return {false, false};
  KernelValueSigns signs([](const hlo::Instruction&) { return true; });
  return {signs.NonPositive(*v), signs.NonNegative(*v)};
}

TEST(ValueSignTest, SoftmaxShiftIsNonPositive) {
  auto m = Parse(R"(
  x = f32[4,6] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max
  b = f32[4,6] broadcast(mx), dimensions={0}
  ROOT s = f32[4,6] subtract(x, b)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FactsOf(*m, "s").non_positive);
  EXPECT_FALSE(FactsOf(*m, "s").non_negative);
}

// jax.nn.softmax: jnp.max(x, axis, keepdims=True) is a reduce and a
// reshape back to rank 2; broadcasting it against x reshapes the size-1 dim
// away again and broadcasts. Any init works: the maximum is at least every
// element it saw.
TEST(ValueSignTest, KeepdimsMaxAndAnyInitAreBounds) {
  auto m = Parse(R"(
  x = f32[4,6] parameter(0)
  init = f32[] parameter(1)
  mx = f32[4] reduce(x, init), dimensions={1}, to_apply=max
  r = f32[4,1] reshape(mx)
  r2 = f32[4] reshape(r)
  b = f32[4,6] broadcast(r2), dimensions={0}
  ROOT s = f32[4,6] subtract(x, b)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FactsOf(*m, "s").non_positive);
}

TEST(ValueSignTest, MaxOverTheLeadingDimIsABoundWhereItIsBroadcastBack) {
  auto m = Parse(R"(
  x = f32[5,5] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[5] reduce(x, ninf), dimensions={0}, to_apply=max
  right = f32[5,5] broadcast(mx), dimensions={1}
  wrong = f32[5,5] broadcast(mx), dimensions={0}
  s_right = f32[5,5] subtract(x, right)
  s_wrong = f32[5,5] subtract(x, wrong)
  ROOT t = (f32[5,5], f32[5,5]) tuple(s_right, s_wrong)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FactsOf(*m, "s_right").non_positive);
  // Column maxima laid along the rows bound nothing.
  EXPECT_FALSE(FactsOf(*m, "s_wrong").non_positive);
}

TEST(ValueSignTest, MaxOverSeveralDimsAndEitherOperandOrder) {
  auto m = Parse(R"(
  x = f32[2,3,4] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[3] reduce(x, ninf), dimensions={0,2}, to_apply=max_swapped
  b = f32[2,3,4] broadcast(mx), dimensions={1}
  ROOT s = f32[2,3,4] subtract(x, b)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FactsOf(*m, "s").non_positive);
}

// The kernel computes a product once for the max and again for the
// subtraction, where it may fuse into an FMA and not be rounded: the
// difference can then be positive, so it proves nothing.
TEST(ValueSignTest, ProductMinusItsMaxIsNotProven) {
  auto m = Parse(R"(
  a = f32[4,6] parameter(0)
  c = f32[] parameter(1)
  bc = f32[4,6] broadcast(c), dimensions={}
  x = f32[4,6] multiply(a, bc)
  cx = f32[4,6] copy(x)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(cx, ninf), dimensions={1}, to_apply=max
  b = f32[4,6] broadcast(mx), dimensions={0}
  ROOT s = f32[4,6] subtract(cx, b)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(FactsOf(*m, "s").non_positive);
}

TEST(ValueSignTest, BoundsMovedOutOfPlaceAreNotBounds) {
  auto m = Parse(R"(
  x = f32[4,4] parameter(0)
  y = f32[4,6] parameter(1)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max
  b = f32[4,4] broadcast(mx), dimensions={0}
  bt = f32[4,4] transpose(b), dimensions={1,0}
  transposed = f32[4,4] subtract(x, bt)
  my = f32[4] reduce(y, ninf), dimensions={1}, to_apply=max
  by = f32[6,4] broadcast(my), dimensions={1}
  rby = f32[4,6] reshape(by)
  reshaped = f32[4,6] subtract(y, rby)
  ROOT t = (f32[4,4], f32[4,6]) tuple(transposed, reshaped)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(FactsOf(*m, "transposed").non_positive);
  EXPECT_FALSE(FactsOf(*m, "reshaped").non_positive);
}

TEST(ValueSignTest, LookalikesAreNotBounds) {
  auto m = Parse(R"(
  x = f32[4,6] parameter(0)
  y = f32[4,6] parameter(1)
  ninf = f32[] constant(-inf)
  mn = f32[4] reduce(x, ninf), dimensions={1}, to_apply=min
  sm = f32[4] reduce(x, ninf), dimensions={1}, to_apply=add
  my = f32[4] reduce(y, ninf), dimensions={1}, to_apply=max
  bmn = f32[4,6] broadcast(mn), dimensions={0}
  bsm = f32[4,6] broadcast(sm), dimensions={0}
  bmy = f32[4,6] broadcast(my), dimensions={0}
  by_min = f32[4,6] subtract(x, bmn)
  by_sum = f32[4,6] subtract(x, bsm)
  by_other = f32[4,6] subtract(x, bmy)
  reversed = f32[4,6] subtract(bmy, y)
  ROOT t = (f32[4,6], f32[4,6], f32[4,6], f32[4,6]) tuple(by_min, by_sum, by_other, reversed)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(FactsOf(*m, "by_min").non_positive);
  EXPECT_FALSE(FactsOf(*m, "by_sum").non_positive);
  EXPECT_FALSE(FactsOf(*m, "by_other").non_positive);
  EXPECT_FALSE(FactsOf(*m, "reversed").non_positive);
}

TEST(ValueSignTest, ArithmeticRules) {
  auto m = Parse(R"(
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  a = f32[8] abs(x)
  na = f32[8] negate(a)
  nx = f32[8] negate(x)
  sq = f32[8] multiply(x, x)
  xy = f32[8] multiply(x, y)
  mixed = f32[8] multiply(na, sq)
  e = f32[8] exponential(y)
  both = f32[8] add(na, na)
  lo = f32[8] minimum(y, na)
  hi = f32[8] maximum(y, e)
  gap = f32[8] subtract(na, e)
  ex = f16[8] convert(na)
  ROOT t = (f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f32[8], f16[8], f32[8]) tuple(nx, sq, xy, mixed, both, lo, hi, gap, ex, a)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(FactsOf(*m, "a").non_negative);
  EXPECT_TRUE(FactsOf(*m, "na").non_positive);
  EXPECT_FALSE(FactsOf(*m, "nx").non_positive);
  EXPECT_FALSE(FactsOf(*m, "nx").non_negative);
  EXPECT_TRUE(FactsOf(*m, "sq").non_negative);
  EXPECT_FALSE(FactsOf(*m, "xy").non_negative);
  EXPECT_FALSE(FactsOf(*m, "xy").non_positive);
  EXPECT_TRUE(FactsOf(*m, "mixed").non_positive);
  EXPECT_TRUE(FactsOf(*m, "both").non_positive);
  EXPECT_TRUE(FactsOf(*m, "lo").non_positive);
  EXPECT_TRUE(FactsOf(*m, "hi").non_negative);
  EXPECT_TRUE(FactsOf(*m, "gap").non_positive);
  EXPECT_TRUE(FactsOf(*m, "ex").non_positive);
}

TEST(ValueSignTest, IntegersHaveNoFacts) {
  auto m = Parse(R"(
  x = s32[8] parameter(0)
  a = s32[8] abs(x)
  n = s32[8] negate(a)
  f = f32[8] convert(n)
  ROOT t = (s32[8], f32[8]) tuple(n, f)
)");
  ASSERT_NE(m, nullptr);
  // abs(INT_MIN) is negative: integer signs are not floats'.
  EXPECT_FALSE(FactsOf(*m, "a").non_negative);
  EXPECT_FALSE(FactsOf(*m, "n").non_positive);
  EXPECT_FALSE(FactsOf(*m, "f").non_positive);
}

TEST(ValueSignTest, MinimumAndMaximumBoundOneSideOnly) {
  auto m = Parse(R"(
  x = f32[8] parameter(0)
  a = f32[8] abs(x)
  na = f32[8] negate(a)
  hi = f32[8] maximum(x, na)
  lo = f32[8] minimum(x, a)
  ROOT t = (f32[8], f32[8]) tuple(hi, lo)
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(FactsOf(*m, "hi").non_positive);
  EXPECT_FALSE(FactsOf(*m, "lo").non_negative);
}

// A fact must follow from the kernel alone (it is cached by its text): the
// reduction outside the kernel is an input like any other.
TEST(ValueSignTest, StopsAtTheKernelBoundary) {
  auto m = Parse(R"(
  x = f32[4,6] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max
  b = f32[4,6] broadcast(mx), dimensions={0}
  ROOT s = f32[4,6] subtract(x, b)
)");
  ASSERT_NE(m, nullptr);
  const hlo::Instruction* s = m->entry()->FindInstruction("s");
  ASSERT_NE(s, nullptr);
  const hlo::Instruction* reduce = m->entry()->FindInstruction("mx");
  KernelValueSigns without_reduce([&](const hlo::Instruction& v) { return &v != reduce; });
  EXPECT_FALSE(without_reduce.NonPositive(*s));
  const hlo::Instruction* broadcast = m->entry()->FindInstruction("b");
  KernelValueSigns without_broadcast([&](const hlo::Instruction& v) { return &v != broadcast; });
  EXPECT_FALSE(without_broadcast.NonPositive(*s));
  KernelValueSigns whole([](const hlo::Instruction&) { return true; });
  EXPECT_TRUE(whole.NonPositive(*s));
}

}  // namespace
}  // namespace sharc::codegen
