// Vector divisions by one value in every lane (a row's value broadcast
// along the row, a constant) go through the divisor's reciprocal with two
// FMA corrections (codegen/object_writer.cc). The quotient must still be
// IEEE's correctly rounded one, bit for bit, on both sides of the range
// checks that send a vector back to the true division (infinities, NaN,
// subnormal and huge quotients, divisors below 1 and above 2^60) and for
// the zeros that stay on the fast path.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "codegen/cpu_tuning.h"
#include "codegen/kernel_compiler.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

constexpr int kRows = 24, kCols = 1031;

float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Each row of `a` divided by its value of `b`.
constexpr const char* kDivideRows = R"(
HloModule divide_rows
ENTRY main {
  a = f32[24,1031] parameter(0)
  b = f32[24] parameter(1)
  bb = f32[24,1031] broadcast(b), dimensions={0}
  ROOT q = f32[24,1031] divide(a, bb)
}
)";

// kRows x kCols dividends of ordinary magnitudes (2^-31 to 2^46), no
// specials: every vector takes the fast path.
std::vector<float> OrdinaryDividends(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> a(static_cast<size_t>(kRows) * kCols);
  for (float& v : a) v = std::ldexp(static_cast<float>(rng() % 100000) + 0.5f, static_cast<int>(rng() % 60) - 30);
  return a;
}

// Runs `text` (parameters a: f32[kRows,kCols], b: f32[kRows]) as one kernel
// compiled under `policy` and through the interpreter; returns the kernel's
// reciprocal divisions. The rewrite's tests ask for it (kAlways): by
// default it is made only where it pays, which this machine may not be.
int64_t ExpectExactQuotients(const std::string& text, const std::vector<float>& a,
                             const std::vector<float>& b,
                             ReciprocalDivision policy = ReciprocalDivision::kAlways) {
  // A cache of its own, so the kernel is compiled here and its rewrites
  // counted, not found from an earlier test.
  KernelCompiler& compiler = KernelCompiler::Global();
  struct Restore {
    std::string cache_dir;
    std::string own_dir;
    ~Restore() {
      KernelCompiler::Global().set_reciprocal_division(ReciprocalDivision::kAuto);
      KernelCompiler::Global().set_cache_dir(cache_dir);
      std::error_code ec;
      std::filesystem::remove_all(own_dir, ec);
    }
  } restore{compiler.cache_dir(), ""};
  char dir[] = "/tmp/sharc_reciprocal_test_XXXXXX";
  if (mkdtemp(dir) == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    return -1;
  }
  restore.own_dir = dir;
  compiler.set_cache_dir(dir);
  compiler.ClearMemoryCache();
  compiler.set_reciprocal_division(policy);
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return -1;
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::FromValues<float>({kRows, kCols}, a));
  args.push_back(hlo::Literal::Vector<float>(b));
  absl::StatusOr<hlo::Literal> expected = hlo::Evaluate(**module, args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  const CompileStats before = KernelCompiler::Global().stats();
  absl::StatusOr<hlo::Literal> actual = testing_util::RunAsOneKernel(**module, args);
  EXPECT_TRUE(actual.ok()) << actual.status();
  if (!expected.ok() || !actual.ok()) return -1;
  EXPECT_TRUE(testing_util::LiteralsMatch(*expected, *actual, 0, 0, "quotients"));
  return KernelCompiler::Global().stats().reciprocal_divisions - before.reciprocal_divisions;
}

// The arithmetic itself, in C++, as object_writer.cc emits it: inside its
// ranges (1 <= |b| <= 2^60, and 2^-99 <= |a*y| <= 2^125 or a = +-0) the
// twice-corrected quotient is a / b exactly, sign of zero included. Random
// finite a of every exponent, random b, and every mantissa of a for
// divisors whose reciprocal rounds worst (mantissas of all ones, one ulp
// above a power of two). During development 2.3e9 pairs passed.
TEST(ReciprocalDivisionTest, TheCorrectedQuotientIsIeeeDivisionInsideTheRange) {
  auto check = [](float a, float b) -> bool {
    const float y = 1.0f / b;
    const float q0 = a * y;
    const bool zero = a == 0.0f;
    if (!(std::fabs(b) >= 1.0f && std::fabs(b) <= 0x1p60f &&
          ((std::fabs(q0) >= 0x1p-99f && std::fabs(q0) <= 0x1p125f) || zero))) {
      return true;  // outside: the kernel divides
    }
    const float q1 = std::fmaf(std::fmaf(-q0, b, a), y, q0);
    const float q = zero ? q0 : std::fmaf(std::fmaf(-q1, b, a), y, q1);
    const float exact = a / b;
    return std::memcmp(&q, &exact, sizeof exact) == 0;
  };
  std::mt19937_64 rng(31);
  int64_t checked = 0;
  for (float zero : {0.0f, -0.0f}) {
    for (float b : {1.0f, -1.0f, 3.0f, -0x1p60f}) ASSERT_TRUE(check(zero, b)) << zero << " / " << b;
  }
  for (int i = 0; i < (1 << 22); ++i, ++checked) {
    const uint64_t x = rng();
    uint32_t bits = static_cast<uint32_t>(x);
    if (((bits >> 23) & 0xff) == 0xff) bits ^= 0x40000000u;  // finite: flip an exponent bit
    const float a = FromBits(bits);
    const float b = std::ldexp(1.0f + static_cast<float>((x >> 32) & 0x7fffff) / 0x800000,
                               static_cast<int>((x >> 56) % 61));
    ASSERT_TRUE(check(a, (x >> 55) & 1 ? -b : b)) << a << " / " << b;
  }
  for (uint32_t b_mantissa : {0x7fffffu, 0x000001u, 0x7ffffeu}) {
    const float b = FromBits((127u << 23) | b_mantissa);
    for (uint32_t a_mantissa = 0; a_mantissa < (1u << 23); a_mantissa += 3, ++checked) {
      const float a = FromBits((127u << 23) | a_mantissa);
      ASSERT_TRUE(check(a, b)) << a << " / " << b;
    }
  }
  EXPECT_GT(checked, 10'000'000);
}

TEST(ReciprocalDivisionTest, DivisionByARowValueIsCorrectlyRounded) {
  std::mt19937_64 rng(23);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Divisors: in range (1 <= |b| <= 2^60, the fast path), at its edges and
  // outside it, and the IEEE specials.
  std::vector<float> b = {1.0f,    -1.0f,   3.0f,     -7.5f,   1024.0f,     0x1p60f,
                          0x1.fffffep0f, 12345.678f, 0.99999994f, 0.5f, 0x1.000002p60f, 1e-30f,
                          0.0f,    -0.0f,   inf,      -inf,    nan,         0x1p-130f,
                          1e30f,   -3e9f,   1.5f,     2.0f,    0x1.fffffep59f, 100.0f};
  ASSERT_EQ(b.size(), static_cast<size_t>(kRows));
  std::vector<float> a(static_cast<size_t>(kRows) * kCols);
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kCols; ++c) {
      const uint64_t x = rng();
      float v;
      if (r % 4 == 3) {
        v = FromBits(static_cast<uint32_t>(x));  // any bit pattern: every exponent, NaN, inf
      } else {
        // Typical magnitudes, every mantissa pattern, both signs.
        const int exponent = static_cast<int>((x >> 32) % 80) - 40;
        v = std::ldexp(1.0f + static_cast<float>(x & 0x7fffff) / 0x800000, exponent);
        if ((x >> 40) & 1) v = -v;
      }
      a[static_cast<size_t>(r) * kCols + c] = v;
    }
  }
  // Row 6: zeros of both signs in every other lane (a masked softmax's
  // exp(-inf) lanes), which stay on the fast path.
  for (int c = 0; c < kCols; c += 2) a[6 * kCols + c] = c % 4 ? -0.0f : 0.0f;
  // Single odd lanes in otherwise ordinary vectors of fast-path rows.
  const float odd[] = {0.0f, -0.0f, inf, -inf, nan, 0x1p-140f, 0x1p-99f, 0x1.fffffep-100f,
                       std::numeric_limits<float>::max(), 0x1p125f, 0x1.000002p125f, 1e-38f};
  for (size_t i = 0; i < std::size(odd); ++i) {
    a[2 * kCols + 17 * i] = odd[i];
    a[4 * kCols + 85 * i + 3] = odd[i];
  }
  // Near the range edges relative to each divisor: quotients at 2^-99 and 2^125.
  for (int r = 0; r < kRows; ++r) {
    a[static_cast<size_t>(r) * kCols + kCols - 1] = 0x1p-99f * std::fabs(b[r]);
    a[static_cast<size_t>(r) * kCols + kCols - 2] = 0x1p125f * std::fabs(b[r]);
  }
  const int64_t rewritten = ExpectExactQuotients(kDivideRows, a, b);
  EXPECT_GT(rewritten, 0) << "the division was not rewritten, so the fast path went untested";
}

TEST(ReciprocalDivisionTest, DivisionByAConstantIsCorrectlyRounded) {
  const std::vector<float> a = OrdinaryDividends(29);
  const std::vector<float> b(kRows, 1.0f);  // unused by the module below
  const int64_t rewritten = ExpectExactQuotients(R"(
HloModule divide_by_three
ENTRY main {
  a = f32[24,1031] parameter(0)
  b = f32[24] parameter(1)
  three = f32[] constant(3)
  b3 = f32[24,1031] broadcast(three), dimensions={}
  ROOT q = f32[24,1031] divide(a, b3)
}
)",
                                                 a, b);
  EXPECT_GT(rewritten, 0);
}

// Without a request the rewrite follows the target and the core (AVX-512
// with a slow divider yes; AVX2, Zen 4 no), kNever keeps every division,
// and every policy divides exactly.
TEST(ReciprocalDivisionTest, PolicyDecidesWhetherDivisionsAreRewritten) {
  std::mt19937_64 rng(37);
  const std::vector<float> a = OrdinaryDividends(41);
  std::vector<float> b(kRows);
  for (float& v : b) v = 1.0f + static_cast<float>(rng() % 1000);
  KernelCompiler& compiler = KernelCompiler::Global();
#if defined(__x86_64__)
  EXPECT_EQ(compiler.DividesThroughReciprocals(),
            __builtin_cpu_supports("avx512f") != 0 && HostCpuTuning().vector_division_is_slow);
#endif
  const bool rewrites = compiler.DividesThroughReciprocals();
  const int64_t automatic = ExpectExactQuotients(kDivideRows, a, b, ReciprocalDivision::kAuto);
  if (rewrites) {
    EXPECT_GT(automatic, 0);
  } else {
    EXPECT_EQ(automatic, 0);
  }
  EXPECT_EQ(ExpectExactQuotients(kDivideRows, a, b, ReciprocalDivision::kNever), 0);
  EXPECT_GT(ExpectExactQuotients(kDivideRows, a, b, ReciprocalDivision::kAlways), 0);

  // The two kinds of code never share a cache entry.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kDivideRows));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph, GraphForComputation(*module->entry()));
  compiler.set_reciprocal_division(ReciprocalDivision::kAlways);
  const std::string rewritten_key = compiler.Key(graph);
  compiler.set_reciprocal_division(ReciprocalDivision::kNever);
  const std::string divided_key = compiler.Key(graph);
  compiler.set_reciprocal_division(ReciprocalDivision::kAuto);
  EXPECT_NE(rewritten_key, divided_key);
  EXPECT_EQ(compiler.Key(graph), rewrites ? rewritten_key : divided_key);
}

}  // namespace
}  // namespace sharc::codegen
