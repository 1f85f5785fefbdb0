// The vectorised f32 exp and tanh (codegen/vector_math.cc), through the
// exponential, logistic and tanh ops' kernels, against double-precision
// libm rounded to f32: a dense sweep of every input range (for exp:
// overflow, normal, subnormal and zero results) in ulps, the thresholds'
// neighbours, and the IEEE specials.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "codegen/cpu_tuning.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

// Distance in representable floats between two non-negative finite floats
// (their bit patterns are ordered like their values).
int64_t UlpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return std::abs(static_cast<int64_t>(ia) - ib);
}

std::vector<float> ExpInputs() {
  std::vector<float> x;
  // Dense over [-110, 95]: overflow, the normal range, subnormal results
  // (below -87.34) and results that round to zero (below -103.97).
  for (int i = 0; i <= 400000; ++i) x.push_back(static_cast<float>(-110.0 + 205.0 * i / 400000));
  // Every float near the thresholds and near zero, and where the rounded k
  // changes at the edges of its range: (n + 1/2) ln2 for k = 128 (the
  // largest power built), k = -125 / -126 (where the subnormal path starts)
  // and k = -150.
  for (float centre : {88.7228394f, -87.3365479f, -103.972076f, -103.278931f, 0.0f, 0.693147182f,
                       -0.693147182f, 0.346573591f, 88.3762589f, -86.9896115f, -103.626f}) {
    float v = centre;
    for (int i = 0; i < 2000; ++i) v = std::nextafter(v, -1e30f);
    for (int i = 0; i < 4000; ++i, v = std::nextafter(v, 1e30f)) x.push_back(v);
  }
  // Small and subnormal inputs, where exp(x) rounds to 1.
  for (float v : {1e-30f, -1e-30f, 1e-45f, -1e-45f, 1e-8f, -1e-8f, 3e-8f, -3e-8f}) x.push_back(v);
  return x;
}

absl::StatusOr<std::vector<float>> RunUnary(const std::string& op, const std::vector<float>& x) {
  const std::string n = std::to_string(x.size());
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(
      "HloModule m\nENTRY main {\n  x = f32[" + n + "] parameter(0)\n  ROOT y = f32[" + n + "] " +
      op + "(x)\n}\n");
  if (!module.ok()) return module.status();
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::Vector<float>(x));
  absl::StatusOr<hlo::Literal> out = testing_util::RunAsOneKernel(**module, args);
  if (!out.ok()) return out.status();
  const absl::Span<const float> y = out->data<float>();
  return std::vector<float>(y.begin(), y.end());
}

TEST(VectorMathTest, ExpIsWithinOneUlpEverywhere) {
  const std::vector<float> x = ExpInputs();
  ASSERT_OK_AND_ASSIGN(std::vector<float> y, RunUnary("exponential", x));
  int64_t worst = 0, subnormal_results = 0, overflows = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(std::exp(static_cast<double>(x[i])));
    if (std::isinf(expected)) {
      ++overflows;
      ASSERT_TRUE(std::isinf(y[i]) && y[i] > 0) << "exp(" << x[i] << ") = " << y[i];
      continue;
    }
    ASSERT_TRUE(std::isfinite(y[i]) && y[i] >= 0) << "exp(" << x[i] << ") = " << y[i];
    const int64_t d = UlpDistance(y[i], expected);
    ASSERT_LE(d, 1) << "exp(" << x[i] << ") = " << y[i] << ", expected " << expected;
    worst = std::max(worst, d);
    subnormal_results += expected > 0 && expected < std::numeric_limits<float>::min();
  }
  // The sweep reached every kind of result.
  EXPECT_GT(subnormal_results, 1000);
  EXPECT_GT(overflows, 1000);
  RecordProperty("worst_ulps", static_cast<int>(worst));
}

TEST(VectorMathTest, ExpKeepsIeeeSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {inf, -inf, nan, -nan, 0.0f, -0.0f, 1e38f, -1e38f,
                                std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::denorm_min()};
  ASSERT_OK_AND_ASSIGN(std::vector<float> y, RunUnary("exponential", x));
  EXPECT_EQ(y[0], inf);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_FALSE(std::signbit(y[1]));
  EXPECT_TRUE(std::isnan(y[2]));
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], 1.0f);
  EXPECT_EQ(y[5], 1.0f);
  EXPECT_EQ(y[6], inf);
  EXPECT_EQ(y[7], 0.0f);
  EXPECT_EQ(y[8], inf);
  EXPECT_EQ(y[9], 0.0f);
  EXPECT_EQ(y[10], 1.0f);
}

// exp(-|x|): its argument is provably never positive, so the kernel takes
// VectorExpOfNonPositive; run on the same -|x| values, the general form
// must give the same bits.
TEST(VectorMathTest, ExpOfProvenNonPositiveMatchesExpBitForBit) {
  std::vector<float> magnitudes = ExpInputs();
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {0.0f, -0.0f, inf, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), 1e30f}) {
    magnitudes.push_back(v);
  }
  std::vector<float> arguments;
  for (float v : magnitudes) arguments.push_back(-std::fabs(v));
  const std::string n = std::to_string(magnitudes.size());
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<hlo::Module> proven,
      hlo::ParseAndVerifyModule("HloModule m\nENTRY main {\n  x = f32[" + n +
                                "] parameter(0)\n  a = f32[" + n + "] abs(x)\n  s = f32[" + n +
                                "] negate(a)\n  ROOT y = f32[" + n + "] exponential(s)\n}\n"));
  ASSERT_OK_AND_ASSIGN(std::string lowering, testing_util::LoweringOfEntry(*proven));
  // The overflow clamp is what the proof leaves out; the flushed lanes'
  // stand-in is the non-positive form's own (where this core's tuning
  // selects +0 for them rather than letting them underflow). The general
  // form has the clamp.
  EXPECT_EQ(lowering.find("89.000000f"), std::string::npos) << lowering;
  EXPECT_EQ(lowering.find("-80.000000f") != std::string::npos, HostCpuTuning().underflow_takes_microcode_assist)
      << lowering;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> plain,
                       hlo::ParseAndVerifyModule("HloModule m\nENTRY main {\n  x = f32[8] "
                                                 "parameter(0)\n  ROOT y = f32[8] exponential(x)\n}\n"));
  ASSERT_OK_AND_ASSIGN(std::string plain_lowering, testing_util::LoweringOfEntry(*plain));
  EXPECT_NE(plain_lowering.find("89.000000f"), std::string::npos) << plain_lowering;
  EXPECT_EQ(plain_lowering.find("-80.000000f"), std::string::npos) << plain_lowering;
  // Both build 2^(k-1) by a shift alone: the exponent bias rides in the
  // rounding constant, 1.5 * 2^23 plus 126, or plus 126 + 64 where the
  // 2^-64 is in the polynomial's coefficients.
  EXPECT_NE(plain_lowering.find("12583038.000000f"), std::string::npos) << plain_lowering;
  EXPECT_NE(lowering.find("12583102.000000f"), std::string::npos) << lowering;

  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::Vector<float>(magnitudes));
  ASSERT_OK_AND_ASSIGN(hlo::Literal specialised, testing_util::RunAsOneKernel(*proven, args));
  ASSERT_OK_AND_ASSIGN(std::vector<float> general, RunUnary("exponential", arguments));
  const absl::Span<const float> y = specialised.data<float>();
  ASSERT_EQ(y.size(), general.size());
  int64_t subnormal_results = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &y[i], sizeof a);
    std::memcpy(&b, &general[i], sizeof b);
    if (std::isnan(general[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << "exp(" << arguments[i] << ")";
      continue;
    }
    ASSERT_EQ(a, b) << "exp(" << arguments[i] << ") = " << y[i] << ", general form " << general[i];
    subnormal_results += y[i] > 0 && y[i] < std::numeric_limits<float>::min();
  }
  EXPECT_GT(subnormal_results, 1000);
}

// Softmax as one kernel: its exp takes the non-positive form, and rows with
// infinities, NaN, huge and masked values still equal the interpreter.
TEST(VectorMathTest, SoftmaxExpIsSpecialisedAndExact) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       hlo::ParseAndVerifyModule(testing_util::SoftmaxText(7, 19)));
  ASSERT_OK_AND_ASSIGN(std::string lowering, testing_util::LoweringOfEntry(*module));
  EXPECT_NE(lowering.find("exponential"), std::string::npos) << lowering;
  EXPECT_EQ(lowering.find("89.000000f"), std::string::npos) << lowering;
  EXPECT_NE(lowering.find("12583102.000000f"), std::string::npos) << lowering;

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x(7 * 19);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37 % 23) - 11) * 0.7f;
  x[0 * 19 + 3] = -inf;                                  // one masked-out entry
  for (int j = 0; j < 19; ++j) x[1 * 19 + j] = -inf;     // a fully masked row: NaN
  x[2 * 19 + 5] = std::numeric_limits<float>::quiet_NaN();
  x[3 * 19 + 7] = inf;                                   // inf - inf: NaN
  for (int j = 0; j < 19; ++j) x[4 * 19 + j] = j % 2 ? 1e30f : -1e30f;
  for (int j = 10; j < 19; ++j) x[5 * 19 + j] = -1e9f;   // attention mask
  // exp(x - max) around the subnormal range and the flush to zero.
  const float deep[19] = {0.0f, -87.0f, -87.5f, -88.0f, -90.0f, -95.0f, -100.0f, -103.0f,
                          -103.97f, -103.98f, -103.99f, -104.0f, -110.0f, -150.0f, -1e4f, -1e30f,
                          -3.0f, -1.0f, -0.5f};
  for (int j = 0; j < 19; ++j) x[6 * 19 + j] = deep[j];
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::FromValues<float>({7, 19}, x));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 4e-6, 0));
}

TEST(VectorMathTest, TanhKeepsIeeeSpecials) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<float> x = {nan, -nan, inf, -inf, 0.0f, -0.0f, tiny, -tiny, 1e-30f, 20.0f, -20.0f};
  ASSERT_OK_AND_ASSIGN(std::vector<float> y, RunUnary("tanh", x));
  EXPECT_TRUE(std::isnan(y[0])) << y[0];
  EXPECT_TRUE(std::isnan(y[1])) << y[1];
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], -1.0f);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_FALSE(std::signbit(y[4]));
  EXPECT_EQ(y[5], 0.0f);
  EXPECT_TRUE(std::signbit(y[5]));
  EXPECT_EQ(y[6], tiny);
  EXPECT_EQ(y[7], -tiny);
  EXPECT_EQ(y[8], 1e-30f);
  EXPECT_EQ(y[9], 1.0f);
  EXPECT_EQ(y[10], -1.0f);
}

// The rational tanh keeps XLA's accuracy within 8 ulp (XLA's bound is a
// relative error of 4e-7, about 7 ulp near +-1; 5 ulp measured since the
// numerator's constant term became the denominator's, 4 before): a dense sweep of [-10, 10], the neighbours
// of former and present thresholds (|x| = 4e-4, 7.905, the clamp at 9.1)
// and tiny inputs.
TEST(VectorMathTest, TanhIsWithinEightUlps) {
  std::vector<float> x;
  for (int i = 0; i <= 400000; ++i) x.push_back(static_cast<float>(-10.0 + 20.0 * i / 400000));
  for (float centre : {4e-4f, -4e-4f, 7.90531111f, -7.90531111f, 9.1f, -9.1f, 0.5f, 1.0f,
                       8.5f, -8.5f, 8.9f, -8.9f}) {
    float v = centre;
    for (int i = 0; i < 1000; ++i) v = std::nextafter(v, -1e30f);
    for (int i = 0; i < 2000; ++i, v = std::nextafter(v, 1e30f)) x.push_back(v);
  }
  for (float v : {1e-30f, -1e-30f, 1e-8f, -1e-8f, 1e-5f, -1e-5f}) x.push_back(v);
  ASSERT_OK_AND_ASSIGN(std::vector<float> y, RunUnary("tanh", x));
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(std::tanh(static_cast<double>(x[i])));
    ASSERT_EQ(std::signbit(y[i]), std::signbit(expected)) << "tanh(" << x[i] << ") = " << y[i];
    // Within a few ulps is not enough near +-9: the rational overshoots 1
    // there by an ulp unless the result is clamped.
    ASSERT_LE(std::fabs(y[i]), 1.0f) << "tanh(" << x[i] << ") = " << y[i];
    const int64_t d = UlpDistance(std::fabs(y[i]), std::fabs(expected));
    ASSERT_LE(d, 8) << "tanh(" << x[i] << ") = " << y[i] << ", expected " << expected;
    worst = std::max(worst, d);
  }
  RecordProperty("worst_ulps", static_cast<int>(worst));
}

// logistic is 1 / (1 + exp(-x)), as the interpreter and XLA's expansion
// compute it: below -88.7, exp(-x) overflows and the result is 0 where the
// true value is a tiny (at most 2^-128) positive number.
TEST(VectorMathTest, LogisticIsWithinFourUlps) {
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i) x.push_back(static_cast<float>(-120.0 + 240.0 * i / 200000));
  ASSERT_OK_AND_ASSIGN(std::vector<float> y, RunUnary("logistic", x));
  for (size_t i = 0; i < x.size(); ++i) {
    const float expected = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x[i]))));
    if (x[i] < -88.72f) {
      ASSERT_TRUE(y[i] >= 0 && y[i] <= expected) << "logistic(" << x[i] << ") = " << y[i];
      continue;
    }
    ASSERT_LE(UlpDistance(y[i], expected), 4) << "logistic(" << x[i] << ") = " << y[i]
                                              << ", expected " << expected;
  }
}

}  // namespace
}  // namespace sharc::codegen
