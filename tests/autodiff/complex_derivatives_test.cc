// Derivatives of the ops on complex numbers (complex, real, imag, abs,
// convert to complex) and of fft for every fft_type, in c64 and c128, with
// one to three transformed dims: forward and reverse mode against central
// differences, and every transpose by the dot-product test under JAX's
// pairing Re(sum(ct t)) (autodiff_test_util.h). Gradients through an FFT
// are also checked against Parseval's closed form.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

struct Precision {
  const char* real;
  const char* complex;
  double eps;        // central-difference step
  double tolerance;  // relative
};

// f32/c64 programs round at 1e-7: a large step keeps the differences'
// rounding small (the ops are linear or smooth).
constexpr Precision kPrecisions[] = {{"f32", "c64", 1e-1, 2e-3}, {"f64", "c128", 1e-4, 1e-6}};

std::string ShapeText(const char* type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}

// fft of a batch of 2 signals with the given fft_length, as a module whose
// one parameter is the operand.
std::string FftModule(const std::string& fft_type, const std::vector<int64_t>& lengths,
                      const Precision& p) {
  std::vector<int64_t> in = {2}, out = {2};
  in.insert(in.end(), lengths.begin(), lengths.end());
  out.insert(out.end(), lengths.begin(), lengths.end());
  const int64_t half = lengths.back() / 2 + 1;
  const char* in_type = p.complex;
  const char* out_type = p.complex;
  if (fft_type == "RFFT") {
    in_type = p.real;
    out.back() = half;
  } else if (fft_type == "IRFFT") {
    out_type = p.real;
    in.back() = half;
  }
  return absl::StrCat("HloModule fft\nENTRY %e {\n  %x = ", ShapeText(in_type, in),
                      " parameter(0)\n  ROOT %y = ", ShapeText(out_type, out), " fft(%x), fft_type=",
                      fft_type, ", fft_length={", absl::StrJoin(lengths, ","), "}\n}\n");
}

TEST(ComplexDerivativesTest, FftEveryTypeRankAndPrecision) {
  // An odd last length (5) gives IRFFT's transpose no Nyquist bin.
  const std::vector<std::vector<int64_t>> lengths = {{5}, {4}, {3, 4}, {2, 3, 5}};
  uint64_t seed = 100;
  for (const Precision& p : kPrecisions) {
    for (const char* type : {"FFT", "IFFT", "RFFT", "IRFFT"}) {
      for (const std::vector<int64_t>& l : lengths) {
        const std::string text = FftModule(type, l, p);
        SCOPED_TRACE(text);
        std::unique_ptr<hlo::Module> module = testing::Parse(text);
        ASSERT_NE(module, nullptr);
        testing::CheckDerivatives(*module, ++seed, text, p.eps, p.tolerance);
        testing::CheckTransposeByDotProduct(*module, 1, text, p.tolerance);
      }
    }
  }
}

// real, imag and complex, on complex and (real, imag) on real operands, and
// a real converted to complex: linear, so each transpose is checked too.
TEST(ComplexDerivativesTest, PartsOfComplexNumbers) {
  for (const Precision& p : kPrecisions) {
    const std::string c = ShapeText(p.complex, {3});
    const std::string r = ShapeText(p.real, {3});
    const std::string text = absl::StrCat(
        "HloModule parts\nENTRY %e {\n  %z = ", c, " parameter(0)\n  %x = ", r,
        " parameter(1)\n  %y = ", r, " parameter(2)\n  %re = ", r, " real(%z)\n  %im = ", r,
        " imag(%z)\n  %w = ", c, " complex(%x, %im)\n  %v = ", c, " complex(%re, %y)\n  %xr = ", r,
        " real(%x)\n  %xi = ", r, " imag(%y)\n  %cx = ", c, " convert(%x)\n  %sum = ", c,
        " add(%w, %cx)\n  ROOT %t = (", c, ", ", c, ", ", r, ", ", r, ") tuple(%sum, %v, %xr, %xi)\n}\n");
    SCOPED_TRACE(text);
    std::unique_ptr<hlo::Module> module = testing::Parse(text);
    ASSERT_NE(module, nullptr);
    testing::CheckDerivatives(*module, 7, text, p.eps, p.tolerance);
    testing::CheckTransposeByDotProduct(*module, 3, text, p.tolerance);
  }
}

// The real rules of data movement, sums, dot and select hold for complex
// values unchanged (no conjugates: transposes, not adjoints).
TEST(ComplexDerivativesTest, LinearOpsOnComplexValues) {
  const std::string text = R"(HloModule linear
%add {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  ROOT %s = c128[] add(%a, %b)
}
ENTRY %e {
  %z = c128[2,3] parameter(0)
  %w = c128[3,2] parameter(1)
  %m = c128[2,3] parameter(2)
  %d = c128[2,2] dot(%z, %m), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %t = c128[3,2] transpose(%z), dimensions={1,0}
  %b = c128[2,3,2] broadcast(%t), dimensions={1,2}
  %zero = c128[] constant((0, 0))
  %sum = c128[3,2] reduce(%b, %zero), dimensions={0}, to_apply=%add
  %p = pred[3,2] constant({{true, false}, {false, true}, {true, true}})
  %sel = c128[3,2] select(%p, %sum, %w)
  %sl = c128[2,2] slice(%sel), slice={[1:3], [0:2]}
  %pad = c128[3,2] pad(%d, %zero), padding=1_0x0_0
  %c = c128[5,2] concatenate(%sl, %pad), dimensions={0}
  %r = c128[10] reshape(%c)
  ROOT %rev = c128[10] reverse(%r), dimensions={0}
}
)";
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 13, "linear complex ops", 1e-3, 1e-8);
  testing::CheckTransposeByDotProduct(*module, 2, "linear complex ops", 1e-10);
}

// The nonlinear complex ops a loss goes through: |z| (JAX's
// real(dz conj(z) / |z|)), products and quotients, exp, log and sqrt.
TEST(ComplexDerivativesTest, NonlinearComplexArithmetic) {
  const std::string text = R"(HloModule arithmetic
ENTRY %e {
  %z = c128[4] parameter(0)
  %w = c128[4] parameter(1)
  %m = c128[4] multiply(%z, %w)
  %q = c128[4] divide(%m, %w)
  %e = c128[4] exponential(%q)
  %l = c128[4] log(%w)
  %s = c128[4] sqrt(%z)
  %a = c128[4] add(%e, %l)
  %b = c128[4] subtract(%a, %s)
  %abs = f64[4] abs(%b)
  ROOT %t = (c128[4], f64[4]) tuple(%b, %abs)
}
)";
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 11, "complex arithmetic", 1e-6, 1e-6);
}

// XLA's other complex elementwise ops are holomorphic: their real rules
// (f'(z) dz) hold for complex tangents. A product reduce and a complex
// convolution are multilinear, their real rules hold too.
TEST(ComplexDerivativesTest, TranscendentalOpsProductsAndConvolutions) {
  const std::string text = R"(HloModule transcendental
%mul (a: c128[], b: c128[]) -> c128[] {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  ROOT %m = c128[] multiply(%a, %b)
}
ENTRY %e {
  %z = c128[4] parameter(0)
  %w = c128[4] parameter(1)
  %s = c128[4] sine(%z)
  %c = c128[4] cosine(%w)
  %t = c128[4] tan(%s)
  %h = c128[4] tanh(%c)
  %x = c128[4] exponential-minus-one(%t)
  %l = c128[4] log-plus-one(%h)
  %g = c128[4] logistic(%x)
  %r = c128[4] rsqrt(%w)
  %p = c128[4] power(%g, %r)
  %sum = c128[4] add(%p, %l)
  %one = c128[] constant((1, 0))
  %prod = c128[] reduce(%sum, %one), dimensions={0}, to_apply=%mul
  %in = c128[1,1,4] reshape(%z)
  %k = c128[1,1,3] slice(%in), slice={[0:1], [0:1], [0:3]}
  %conv = c128[1,1,4] convolution(%in, %k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0
  ROOT %out = (c128[4], c128[], c128[1,1,4]) tuple(%sum, %prod, %conv)
}
)";
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 17, "complex transcendental ops", 1e-6, 1e-6);
}

// The gradients of `text`'s entry (a scalar loss) at `args`, from the
// printed and re-parsed gradient module.
Literal GradAt(const std::string& text, const std::vector<Literal>& args) {
  std::unique_ptr<hlo::Module> module = testing::Parse(text);
  if (module == nullptr) return Literal();
  auto grad = Grad(*module, *module->entry());
  EXPECT_TRUE(grad.ok()) << grad.status();
  if (!grad.ok()) return Literal();
  module->set_entry(*grad);
  std::unique_ptr<hlo::Module> reparsed = testing::Reparse(*module);
  return reparsed == nullptr ? Literal() : testing::Run(*reparsed, args);
}

// Parseval: sum |FFT(x)|^2 = n sum x^2, so the gradient is 2 n x; through
// RFFT and IRFFT (whose round trip is the identity) it is 2 x.
constexpr char kParsevalLoss[] = R"(HloModule parseval
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
ENTRY %e {
  %x = f64[6] parameter(0)
  %zero = f64[6] constant({0, 0, 0, 0, 0, 0})
  %c = c128[6] complex(%x, %zero)
  %f = c128[6] fft(%c), fft_type=FFT, fft_length={6}
  %a = f64[6] abs(%f)
  %sq = f64[6] multiply(%a, %a)
  %r = c128[4] fft(%x), fft_type=RFFT, fft_length={6}
  %back = f64[6] fft(%r), fft_type=IRFFT, fft_length={6}
  %bsq = f64[6] multiply(%back, %back)
  %both = f64[6] add(%sq, %bsq)
  %init = f64[] constant(0)
  ROOT %loss = f64[] reduce(%both, %init), dimensions={0}, to_apply=%add
}
)";

TEST(ComplexDerivativesTest, GradientThroughFftMatchesParseval) {
  const std::vector<double> x = {0.5, -1, 2, 0.25, -3, 1.5};
  Literal g = GradAt(kParsevalLoss, {Literal::FromValues<double>({6}, x)});
  ASSERT_TRUE(g.is_tuple());
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(g.element(0).GetAsDouble(i), (2 * 6 + 2) * x[static_cast<size_t>(i)], 1e-9)
        << "element " << i;
  }
}

// Second order: the gradient's program (FFTs, pads, masks, conjugates) has
// JVPs too; its Hessian is (2 n + 2) I, so a Hessian-vector product is
// (2 n + 2) t.
TEST(ComplexDerivativesTest, HessianThroughFftIsParsevalsConstant) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kParsevalLoss);
  ASSERT_NE(module, nullptr);
  auto grad = GradModule(*module);
  ASSERT_TRUE(grad.ok()) << grad.status();
  auto hvp = JvpModule(**grad);
  ASSERT_TRUE(hvp.ok()) << hvp.status();
  std::unique_ptr<hlo::Module> reparsed = testing::Reparse(**hvp);
  ASSERT_NE(reparsed, nullptr);
  const std::vector<double> x = {0.5, -1, 2, 0.25, -3, 1.5};
  const std::vector<double> t = {1, 0.5, -2, 3, 0, -1};
  Literal out = testing::Run(*reparsed, {Literal::FromValues<double>({6}, x),
                                         Literal::FromValues<double>({6}, t)});
  ASSERT_TRUE(out.is_tuple());
  const Literal& tangent = out.element(1).element(0);  // of the gradients' tuple
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(tangent.GetAsDouble(i), (2 * 6 + 2) * t[static_cast<size_t>(i)], 1e-9)
        << "element " << i;
  }
}

TEST(ComplexDerivativesTest, ComplexParametersHaveGradients) {
  // loss(z) = sum |z|^2 = sum re^2 + im^2; JAX's gradient convention gives
  // 2 conj(z) (a transpose, not an adjoint).
  const std::string text = R"(HloModule norm
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
ENTRY %e {
  %z = c128[2] parameter(0)
  %a = f64[2] abs(%z)
  %sq = f64[2] multiply(%a, %a)
  %init = f64[] constant(0)
  ROOT %loss = f64[] reduce(%sq, %init), dimensions={0}, to_apply=%add
}
)";
  Literal z(hlo::Shape(hlo::PrimitiveType::kC128, {2}));
  hlo::SetComplex(z, 0, {1, 2});
  hlo::SetComplex(z, 1, {-3, 0.5});
  Literal g = GradAt(text, {z});
  ASSERT_TRUE(g.is_tuple());
  EXPECT_NEAR(hlo::GetComplex(g.element(0), 0).real(), 2, 1e-12);
  EXPECT_NEAR(hlo::GetComplex(g.element(0), 0).imag(), -4, 1e-12);
  EXPECT_NEAR(hlo::GetComplex(g.element(0), 1).real(), -6, 1e-12);
  EXPECT_NEAR(hlo::GetComplex(g.element(0), 1).imag(), -1, 1e-12);
}

}  // namespace
}  // namespace sharc::autodiff
