// Every elementwise op's Halide kernel against the interpreter, for every
// element type it accepts. One kernel per dtype holds all the ops (a tuple of
// results), so each dtype costs one compile. Shapes have an inner dim of 67:
// not a multiple of any vector width, and long enough to vectorise.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "hlo/ir/primitive_type.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;
using testing_util::LiteralsMatch;

struct Builder {
  std::string type, dims;
  std::vector<std::string> lines, results, result_shapes;
  void Add(const std::string& result_type, const std::string& text) {
    std::string name = absl::StrCat("r", results.size());
    lines.push_back(absl::StrCat("  ", name, " = ", result_type, "[", dims, "] ", text));
    results.push_back(name);
    result_shapes.push_back(absl::StrCat(result_type, "[", dims, "]"));
  }
  std::string Module(const std::string& name) const {
    return absl::StrCat("HloModule ", name, "\nENTRY main {\n  a = ", type, "[", dims,
                        "] parameter(0)\n  b = ", type, "[", dims, "] parameter(1)\n  c = ", type,
                        "[", dims, "] parameter(2)\n  w = ", type, "[", dims,
                        "] parameter(3)\n  p = pred[", dims, "] parameter(4)\n  s = ", type,
                        "[] parameter(5)\n", absl::StrJoin(lines, "\n"), "\n  ROOT out = (",
                        absl::StrJoin(result_shapes, ", "), ") tuple(",
                        absl::StrJoin(results, ", "), ")\n}\n");
  }
};

bool IsFloat(PrimitiveType t) { return hlo::IsFloatingPoint(t); }

// Ops whose results are exact in both implementations (IEEE-exact ops, or
// the same libm call).
std::string ExactModule(PrimitiveType t) {
  Builder m;
  m.type = hlo::PrimitiveTypeName(t);
  m.dims = "5,67";
  const std::string& T = m.type;
  const bool fp = IsFloat(t), pred = t == PrimitiveType::kPred;
  const bool sint = hlo::IsSignedInteger(t), integral = hlo::IsInteger(t);
  if (fp) {
    for (const char* op : {"cbrt", "ceil", "cosine", "exponential-minus-one", "floor",
                           "log-plus-one", "round-nearest-afz", "round-nearest-even", "rsqrt",
                           "sine", "sqrt", "tan", "acos", "acosh", "asin", "asinh", "atanh",
                           "cosh", "sinh", "erf"}) {
      m.Add(T, absl::StrCat(op, "(a)"));
    }
    // Rounded to bf16's and f16's precision, and to a format with 3
    // exponent and 2 mantissa bits, where most of w overflows.
    for (const char* bits : {"exponent_bits=8, mantissa_bits=7", "exponent_bits=5, mantissa_bits=10",
                             "exponent_bits=3, mantissa_bits=2", "exponent_bits=4, mantissa_bits=0"}) {
      m.Add(T, absl::StrCat("reduce-precision(a), ", bits));
      m.Add(T, absl::StrCat("reduce-precision(w), ", bits));
    }
    m.Add("pred", "is-finite(a)");
    m.Add(T, "atan2(a, b)");
    m.Add(T, "round-nearest-afz(w)");
    m.Add(T, "round-nearest-even(w)");
  }
  if (fp || sint) m.Add(T, "abs(a)");
  if (!pred) {
    m.Add(T, "negate(a)");
    m.Add(T, "sign(a)");
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "power"}) {
      m.Add(T, absl::StrCat(op, "(a, b)"));
    }
    m.Add(T, "clamp(b, a, c)");
    m.Add(T, "clamp(s, a, c)");
  }
  if (pred || integral) {
    m.Add(T, "not(a)");
    for (const char* op : {"and", "or", "xor"}) m.Add(T, absl::StrCat(op, "(a, b)"));
  }
  if (integral) {
    m.Add(T, "popcnt(a)");
    m.Add(T, "count-leading-zeros(a)");
    m.Add(T, "count-leading-zeros(w)");
    for (const char* op : {"shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
      m.Add(T, absl::StrCat(op, "(a, b)"));
    }
  }
  m.Add(T, "maximum(a, b)");
  m.Add(T, "minimum(a, b)");
  for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    m.Add("pred", absl::StrCat("compare(a, b), direction=", dir));
    if (fp) m.Add("pred", absl::StrCat("compare(a, w), direction=", dir, ", type=TOTALORDER"));
  }
  m.Add(T, "select(p, a, b)");
  m.Add(T, "copy(a)");
  int count = 0;
  const PrimitiveType* all = hlo::AllArrayTypes(&count);
  for (int i = 0; i < count; ++i) {
    m.Add(hlo::PrimitiveTypeName(all[i]), "convert(a)");
    m.Add(hlo::PrimitiveTypeName(all[i]), "convert(w)");
  }
  return m.Module(absl::StrCat("exact_", T));
}

// Ops computed with Halide's own polynomials (vectorised), not libm.
std::string ApproximateModule(PrimitiveType t) {
  Builder m;
  m.type = hlo::PrimitiveTypeName(t);
  m.dims = "5,67";
  for (const char* op : {"exponential", "log", "logistic", "tanh"}) {
    m.Add(m.type, absl::StrCat(op, "(a)"));
  }
  m.Add(m.type, "tanh(w)");
  return m.Module(absl::StrCat("approx_", m.type));
}

// Inputs: a, b, c in [-3, 3) (a with NaN, +-inf and -0 up front for floats),
// w wide (float-to-int saturation, large rounding), p random, s a scalar.
std::vector<hlo::Literal> Inputs(const hlo::Module& module, PrimitiveType t, bool specials) {
  std::vector<hlo::Literal> args = testing_util::RandomArgs(module, 42);
  std::mt19937_64 rng(7);
  args[3] = testing_util::RandomLiteral(args[3].shape(), rng, -3e9, 3e9);
  if (IsFloat(t) && specials) {
    args[0].SetFromDouble(0, std::nan(""));
    args[0].SetFromDouble(1, INFINITY);
    args[0].SetFromDouble(2, -INFINITY);
    args[0].SetFromDouble(3, -0.0);
    args[0].SetFromDouble(4, 2.5);
    args[0].SetFromDouble(5, -0.5);
    args[0].SetFromDouble(8, 0.0);  // negate(+0) is -0 (Halide's -x is 0 - x)
    args[1].SetFromDouble(6, std::nan(""));
    args[1].SetFromDouble(7, 0.0);
    args[3].SetFromDouble(0, -0.0);
    args[3].SetFromDouble(1, std::nan(""));
  }
  return args;
}

class ElementwiseLoweringTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ElementwiseLoweringTest, ExactOpsEqualInterpreter) {
  const PrimitiveType t = GetParam();
  const std::string text = ExactModule(t);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = Inputs(*module, t, /*specials=*/true);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(LiteralsMatch(expected, actual, 0, 0, "exact ops")) << text;
}

TEST_P(ElementwiseLoweringTest, PolynomialOpsCloseToInterpreter) {
  const PrimitiveType t = GetParam();
  if (!IsFloat(t)) return;  // float-only ops; the integer instances check nothing more
  const std::string text = ApproximateModule(t);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = Inputs(*module, t, /*specials=*/false);
  for (int64_t i = 0; i < args[0].num_elements(); ++i) {
    args[0].SetFromDouble(i, std::abs(args[0].GetAsDouble(i)) * (i % 3 == 0 ? -1 : 1));
  }
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // One rounding step of the storage type, or a few f32/f64 ulps.
  double rtol = t == PrimitiveType::kBF16 ? 8e-3 : t == PrimitiveType::kF16 ? 1e-3
               : t == PrimitiveType::kF32 ? 2e-6 : 1e-13;
  EXPECT_TRUE(LiteralsMatch(expected, actual, rtol, rtol, "polynomial ops")) << text;
}

// f32 NaNs whatever their payload convert to NaN in f16 and bf16 (a
// rounding conversion that adds to the bits could carry a payload's low
// half into the sign), and the values around them convert as the
// interpreter converts them.
TEST(ConvertLoweringTest, NarrowingKeepsNanWhateverItsPayload) {
  const std::vector<uint32_t> nan_bits = {0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0xffffffffu,
                                          0x7f800001u, 0x7fbfffffu, 0x7fff8001u, 0xffff8000u};
  std::vector<float> x;
  for (uint32_t b : nan_bits) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
  }
  for (float v : {1.0f, -2.5f, 65504.0f, 3.0e38f, -0.0f, 1e-40f, 0.33333334f, 1.00390625f}) x.push_back(v);
  const std::string n = std::to_string(x.size());
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<hlo::Module> module,
      hlo::ParseAndVerifyModule("HloModule m\nENTRY main {\n  x = f32[" + n + "] parameter(0)\n"
                                "  b = bf16[" + n + "] convert(x)\n  h = f16[" + n +
                                "] convert(x)\n  ROOT t = (bf16[" + n + "], f16[" + n +
                                "]) tuple(b, h)\n}\n"));
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::Vector<float>(x));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  for (int64_t out = 0; out < 2; ++out) {
    for (size_t i = 0; i < nan_bits.size(); ++i) {
      EXPECT_TRUE(std::isnan(actual.element(out).GetAsDouble(static_cast<int64_t>(i))))
          << (out == 0 ? "bf16" : "f16") << " of NaN bits 0x" << std::hex << nan_bits[i] << ": "
          << actual.element(out).GetAsDouble(static_cast<int64_t>(i));
    }
  }
  EXPECT_TRUE(LiteralsMatch(expected, actual, 0, 0, "narrowing converts"));
  // LiteralsMatch does not compare zeros' signs; -0 stays -0 in both.
  const int64_t minus_zero = static_cast<int64_t>(nan_bits.size()) + 4;
  ASSERT_EQ(x[static_cast<size_t>(minus_zero)], 0.0f);
  EXPECT_TRUE(std::signbit(actual.element(0).GetAsDouble(minus_zero)));
  EXPECT_TRUE(std::signbit(actual.element(1).GetAsDouble(minus_zero)));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ElementwiseLoweringTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

}  // namespace
}  // namespace sharc::codegen
