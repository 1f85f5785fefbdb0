// rng draws within its bounds, the same numbers on every evaluation (so the
// devices of a partitioned run agree); rng-bit-generator runs XLA's
// algorithms (random_bit_algorithms_test.cc checks their bits); the linear
// algebra ops verify and infer their shapes (linalg_eval_test.cc and
// complex_eval_test.cc run them).
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::HasSubstr;

std::string VerifyError(const std::string& text) {
  absl::Status status = ParseAndVerifyModule(text).status();
  return status.ok() ? "verified" : std::string(status.message());
}

constexpr char kUniform[] = R"(HloModule m
ENTRY %e {
  %a = f32[] constant(-2)
  %b = f32[] constant(3)
  %u = f32[1000] rng(%a, %b), distribution=rng_uniform
  %lo = s32[] constant(5)
  %hi = s32[] constant(8)
  %i = s32[1000] rng(%lo, %hi), distribution=rng_uniform
  %m = f64[] constant(10)
  %s = f64[] constant(0.5)
  %n = f64[4000] rng(%m, %s), distribution=rng_normal
  ROOT %t = (f32[1000], s32[1000], f64[4000]) tuple(%u, %i, %n)
})";

TEST(RngTest, DrawsWithinTheBoundsAndRepeatsItsNumbers) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kUniform));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}));
  const Literal& u = out.element(0);
  const Literal& i = out.element(1);
  const Literal& n = out.element(2);
  bool saw_low_half = false, saw_high_half = false;
  for (int64_t k = 0; k < u.num_elements(); ++k) {
    EXPECT_GE(u.GetAsDouble(k), -2.0);
    EXPECT_LT(u.GetAsDouble(k), 3.0);
    saw_low_half |= u.GetAsDouble(k) < 0.5;
    saw_high_half |= u.GetAsDouble(k) >= 0.5;
    EXPECT_GE(i.GetAsInt64(k), 5);
    EXPECT_LE(i.GetAsInt64(k), 7);
  }
  EXPECT_TRUE(saw_low_half && saw_high_half);
  double mean = 0;
  for (int64_t k = 0; k < n.num_elements(); ++k) mean += n.GetAsDouble(k);
  mean /= static_cast<double>(n.num_elements());
  EXPECT_NEAR(mean, 10.0, 0.05);  // 4 standard errors of 0.5/sqrt(4000)
  ASSERT_OK_AND_ASSIGN(Literal again, Evaluate(*module, {}));
  EXPECT_EQ(out, again);
}

TEST(RngTest, VerifierNamesTheProblem) {
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %a = f32[] constant(0)
  %b = s32[] constant(1)
  ROOT %u = f32[4] rng(%a, %b), distribution=rng_uniform
})"),
              HasSubstr("operand 1 must be f32[] (the result's type), got s32[]"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %a = s32[] constant(0)
  %b = s32[] constant(1)
  ROOT %u = s32[4] rng(%a, %b), distribution=rng_normal
})"),
              HasSubstr("draws normal values of floating-point types only"));
}

// The op through the interpreter: rng_default is Philox (XLA's CPU and GPU
// choice), the state advances, and the bits keep their pattern in a
// signed type.
TEST(RngBitGeneratorTest, RunsXlasAlgorithms) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %s = u64[3] constant({0, 0, 0})
  %d = (u64[3], u32[4]) rng-bit-generator(%s), algorithm=rng_default
  %p = (u64[3], s32[4]) rng-bit-generator(%s), algorithm=rng_philox
  %z = u64[2] constant({0, 0})
  %t = (u64[2], u32[2]) rng-bit-generator(%z), algorithm=rng_three_fry
  %n = (u64[2], s4[2]) rng-bit-generator(%z), algorithm=rng_three_fry
  ROOT %r = ((u64[3], u32[4]), (u64[3], s32[4]), (u64[2], u32[2]), (u64[2], s4[2])) tuple(%d, %p, %t, %n)
})"));
  ASSERT_OK(CheckRunnableTypes(*module));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}));
  // Philox at counter 0, key 0 (Random123's first vector), and ThreeFry's.
  const Literal& d = out.element(0);
  EXPECT_EQ(d.element(1).GetAsInt64(0), 0x6627e8d5);
  EXPECT_EQ(d.element(1).GetAsInt64(3), 0x9b00dbd8);
  EXPECT_EQ(d.element(0).GetAsInt64(1), 1);  // one block drawn
  EXPECT_EQ(out.element(1).element(1).GetAsInt64(1), static_cast<int32_t>(0xe169c58du));
  EXPECT_EQ(out.element(2).element(1).GetAsInt64(0), 0x6b200159);
  EXPECT_EQ(out.element(2).element(1).GetAsInt64(1), 0x99ba4efe);
  // Sub-byte elements keep each word's low bits, as values of their type
  // (0x...9 and 0x...e in s4: -7 and -2), equal to the same values made
  // any other way.
  const Literal& nibbles = out.element(3).element(1);
  EXPECT_EQ(nibbles.GetAsInt64(0), -7);
  EXPECT_EQ(nibbles.GetAsInt64(1), -2);
  Literal same(nibbles.shape());
  same.SetFromInt64(0, -7);
  same.SetFromInt64(1, -2);
  EXPECT_EQ(nibbles, same);
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %s = u32[2] parameter(0)
  ROOT %g = (u32[2], u32[8]) rng-bit-generator(%s), algorithm=rng_philox
})"),
              HasSubstr("state must be u64[n]"));
}

TEST(LinalgOpsTest, ShapesAreChecked) {
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %a = f32[3,4] parameter(0)
  ROOT %c = f32[3,4] cholesky(%a), lower=true
})"),
              HasSubstr("needs square floating-point matrices"));
  EXPECT_THAT(VerifyError(R"(HloModule m
ENTRY %e {
  %a = f32[3,3] parameter(0)
  %b = f32[4,5] parameter(1)
  ROOT %s = f32[4,5] triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})"),
              HasSubstr("needs m = 4"));
  ASSERT_OK_AND_ASSIGN(auto rfft, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = f32[2,16] parameter(0)
  ROOT %f = fft(%x), fft_type=RFFT, fft_length={16}
})"));
  EXPECT_EQ(rfft->entry()->root()->shape().ToString(), "c64[2,9]");

}

}  // namespace
}  // namespace sharc::hlo
