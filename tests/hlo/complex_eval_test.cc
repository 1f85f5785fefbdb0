// Complex values at run time (c64, c128): the elementwise ops, dot, reduce
// (sum), complex/real/imag, convert and fft evaluate as NumPy computes them
// (the values below are printed by tests/hlo/complex_expected.py; rerun it
// and paste its output to change them), and a module using an op sharc does
// not compute complex values with is refused before it runs.
#include <complex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/complex_values.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/hlo/op_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::HasSubstr;
using testing::OpHarness;

struct ComplexCase {
  Opcode opcode;
  std::vector<double> expected;  // interleaved (real, imag)
};

struct FftCase {
  const char* fft_type;
  const char* input;  // "z" (complex [2,3,4]), "r" (real [2,3,4]) or "half"
  std::vector<int64_t> fft_length;
  std::vector<int64_t> result_dims;
  std::vector<double> expected;  // interleaved unless the result is real
};

constexpr double kX[] = {0.0, 0.0, -1.75, -1.25, 0.75, 2.0, -0.0, -0.75, 0.75, 0.25, -1.75, 2.0};
constexpr double kY[] = {0.75, -2.0, -1.25, 1.25, -0.25, 1.5, -1.5, 0.0, -0.75, 0.5, -0.75, 0.5};
const ComplexCase kUnaryCases[] = {
    {Opcode::kNegate, {-0.75, 2.0, 1.25, -1.25, 0.25, -1.5, 1.5, -0.0, 0.75, -0.5, 0.75, -0.5}},
    {Opcode::kExp, {-0.8809828598836126, -1.9249826676958306, 0.0903413693835317, 0.27188864559191706, 0.05509018805108691, 0.7768498766770381, 0.22313016014842982, 0.0, 0.41454064950578356, 0.22646458896647162, 0.41454064950578356, 0.22646458896647162}},
    {Opcode::kLog, {0.7589353594543049, -1.2120256565243244, 0.5697171415941824, 2.356194490192345, 0.4191645952022216, 1.7359450042095235, 0.4054651081081644, 3.141592653589793, -0.10381968238912226, 2.5535900500422257, -0.10381968238912226, 2.5535900500422257}},
    {Opcode::kSqrt, {1.201249544501346, -0.8324664967220552, 0.5088059320440205, 1.2283661817565577, 0.7970855137858657, 0.9409279017476724, 0.0, 1.224744871391589, 0.27512526135016874, 0.9086770105119854, 0.27512526135016874, 0.9086770105119854}},
};
constexpr double kSignX[] = {0.0, 0.0, -0.813733471206735, -0.5812381937190965, 0.3511234415883917, 0.9363291775690445, -0.0, -1.0, 0.9486832980505138, 0.31622776601683794, -0.658504607868518, 0.7525766947068778};
const ComplexCase kBinaryCases[] = {
    {Opcode::kAdd, {0.75, -2.0, -3.0, 0.0, 0.5, 3.5, -1.5, -0.75, 0.0, 0.75, -2.5, 2.5}},
    {Opcode::kSubtract, {-0.75, 2.0, -0.5, -2.5, 1.0, 0.5, 1.5, -0.75, 1.5, -0.25, -1.0, 1.5}},
    {Opcode::kMultiply, {0.0, 0.0, 3.75, -0.625, -3.1875, 0.625, 0.0, 1.125, -0.6875, 0.1875, 0.3125, -2.375}},
    {Opcode::kDivide, {-0.0, 0.0, 0.2, 1.2000000000000002, 1.216216216216216, -0.7027027027027025, -0.0, 0.5, -0.5384615384615385, -0.6923076923076923, 2.8461538461538463, -0.7692307692307694}},
};
constexpr double kAbsX[] = {0.0, 2.1505813167606567, 2.1360009363293826, 0.75, 0.7905694150420949, 2.6575364531836625};
constexpr double kDotXY[] = {0.5625, 0.0, 0.375, -1.0625, -5.3125, -3.0625, -0.375, -1.0625};
constexpr double kSumX[] = {-1.0, 0.75, -1.0, 1.5};
constexpr double kZ[] = {0.75, -1.0, 2.0, -0.5, 0.25, -1.0, -1.5, 0.5, 0.75, -2.0, 0.75, -0.25, 1.5, 1.0, 0.75, -0.25, -0.75, 0.5, -1.75, -0.25, -0.25, 0.5, 0.5, 1.5, 1.0, 0.75, 0.75, 1.5, 0.5, 1.25, 0.5, 0.0, -1.0, -0.25, -0.5, 0.75, -0.25, 0.75, -1.75, -0.75, 1.75, 0.5, -1.75, -0.5, 2.0, 2.0, 1.25, -1.0};
constexpr double kR[] = {-0.25, 1.5, -0.0, -1.0, -1.0, 1.0, 0.75, -0.75, -0.75, 0.0, 1.5, 0.75, -1.75, 0.5, 1.75, -0.25, 1.5, 1.5, -1.0, -0.5, -1.0, -0.0, 0.75, 1.0};
constexpr double kHalf[] = {1.75, 0.0, -4.25, -3.5, -1.25, 0.0, -0.5, 1.299038105676658, -0.4150635094610964, -2.433012701892219, -0.5, 0.4330127018922193, -0.5, -1.299038105676658, 3.9150635094610964, -1.5669872981077808, -0.5, -0.4330127018922193, 2.5, 0.0, -2.75, -1.75, -2.0, 0.0, -0.875, -0.649519052838329, -6.473076211353316, -3.930607966083864, 0.625, -0.649519052838329, -0.875, 0.649519052838329, -1.276923788646684, 3.430607966083864, 0.625, 0.649519052838329};
const FftCase kFftCases[] = {
    {"FFT", "z", {4}, {2, 3, 4},
     {1.5, -2.0, -0.5, -3.5, 0.5, -2.0, 1.5, 3.5, 3.75, -1.5, -0.75, -3.0, 0.75, -0.5, -0.75, -3.0, -2.25, 2.25, -2.25, 2.25, 0.25, -0.25, 1.25, -2.25, 2.75, 3.5, 2.0, -0.75, 0.25, 0.5, -1.0, -0.25, -3.5, 0.5, 0.75, -2.25, 1.0, 0.5, -2.25, 0.25, 3.25, 1.0, 0.25, 1.5, 4.25, 4.0, -0.75, -4.5}},
    {"FFT", "z", {3, 4}, {2, 3, 4},
     {3.0, -1.25, -3.5, -4.25, 1.5, -2.75, 2.0, -1.75, -2.4975952641916446, -7.571152422706632, -3.546633369868303, -4.424038105676658, -0.21650635094610965, -2.058012701892219, 0.600480947161671, 7.857050807568877, 3.9975952641916446, 2.821152422706632, 5.546633369868303, -1.825961894323342, 0.21650635094610965, -1.1919872981077808, 1.899519052838329, 4.392949192431123, 2.5, 5.0, 3.0, -1.5, 5.5, 5.0, -4.0, -4.5, 2.441987298107781, 8.595671475544961, -1.7475952641916446, -0.8080127018922193, -5.406088913245535, 1.0645825622994254, 4.613620667976083, 3.174038105676658, 3.308012701892219, -3.09567147554496, 4.747595264191645, 0.0580127018922193, 0.6560889132455352, -4.564582562299425, -3.6136206679760834, 0.575961894323342}},
    {"IFFT", "z", {2, 3, 4}, {2, 3, 4},
     {0.22916666666666666, 0.15625, -0.08333333333333333, -0.26041666666666663, 0.29166666666666663, 0.09374999999999999, -0.020833333333333315, -0.23958333333333331, 0.30440033192016097, -0.011438293868263671, -0.07142090063073975, 0.2070379619481027, 0.0363581360079852, -0.23985707751696692, 0.42892619308583113, -0.07366454968463011, -0.0023169985868276566, 0.04268829386826373, 0.2172542339640731, 0.45962870471856393, -0.23427480267465184, -0.04139292248303308, -0.22059285975249782, -0.21800211698203653, 0.020833333333333343, -0.26041666666666663, 0.25, 0.11458333333333334, -0.16666666666666666, -0.32291666666666663, -0.2708333333333333, -0.11458333333333331, 0.028732606762476076, 0.24653432909381634, 0.22971415503393383, 0.15904113742115755, -0.018315940095809398, 0.14052480267465187, 0.033293254403194084, -0.07849894150898172, -0.2058159400958094, -0.6736176624271497, -0.16721415503393386, 0.19512552924550913, 0.21623260676247602, -0.13010813600798518, -0.07495992106986077, -0.15066772515768495}},
    {"RFFT", "r", {4}, {2, 3, 3},
     {0.25, 0.0, -0.25, -2.5, -0.75, 0.0, 0.0, 0.0, -1.75, -1.75, -0.5, 0.0, 1.5, 0.0, -2.25, 0.75, 0.0, 0.0, 0.25, 0.0, -3.5, -0.75, -0.25, 0.0, 1.5, 0.0, 2.5, -2.0, -0.5, 0.0, 0.75, 0.0, -1.75, 1.0, -1.25, 0.0}},
    {"RFFT", "r", {3, 4}, {2, 3, 3},
     {1.75, 0.0, -4.25, -3.5, -1.25, 0.0, -0.5, 1.299038105676658, -0.4150635094610964, -2.433012701892219, -0.5, 0.4330127018922193, -0.5, -1.299038105676658, 3.9150635094610964, -1.5669872981077808, -0.5, -0.4330127018922193, 2.5, 0.0, -2.75, -1.75, -2.0, 0.0, -0.875, -0.649519052838329, -6.473076211353316, -3.930607966083864, 0.625, -0.649519052838329, -0.875, 0.649519052838329, -1.276923788646684, 3.430607966083864, 0.625, 0.649519052838329}},
    {"IRFFT", "half", {3, 4}, {2, 3, 4},
     {-0.25, 1.5, 0.0, -1.0, -1.0, 1.0, 0.75, -0.75, -0.75, 1.1102230246251565e-16, 1.5, 0.7499999999999999, -1.75, 0.5, 1.75, -0.25, 1.4999999999999998, 1.5, -0.9999999999999998, -0.5, -0.9999999999999998, 0.0, 0.7499999999999998, 1.0}},
};

template <size_t N>
std::vector<double> Of(const double (&values)[N]) {
  return std::vector<double>(values, values + N);
}

// A complex literal of `type` from interleaved (real, imag) values.
Literal ComplexLiteral(PrimitiveType type, std::vector<int64_t> dims,
                       const std::vector<double>& parts) {
  Literal l(Shape(type, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    SetComplex(l, i, Complex128(parts[2 * i], parts[2 * i + 1]));
  }
  return l;
}

Literal RealLiteral(PrimitiveType type, std::vector<int64_t> dims,
                    const std::vector<double>& values) {
  Literal l(Shape(type, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) l.SetFromDouble(i, values[i]);
  return l;
}

// Compares a complex or real result with expected values (interleaved for
// complex) to a relative `tolerance`.
void ExpectValues(const Literal& result, const std::vector<double>& expected, double tolerance,
                  const std::string& what) {
  const bool complex = IsComplex(result.shape().type());
  ASSERT_EQ(static_cast<size_t>(result.num_elements() * (complex ? 2 : 1)), expected.size())
      << what;
  for (int64_t i = 0; i < result.num_elements(); ++i) {
    if (complex) {
      const Complex128 want(expected[2 * i], expected[2 * i + 1]);
      EXPECT_LE(std::abs(GetComplex(result, i) - want), tolerance * (1 + std::abs(want)))
          << what << " element " << i << ": got " << GetComplex(result, i) << ", want " << want;
    } else {
      EXPECT_NEAR(result.GetAsDouble(i), expected[i], tolerance * (1 + std::abs(expected[i])))
          << what << " element " << i;
    }
  }
}

TEST(ComplexEvalTest, ElementwiseOpsMatchNumPy) {
  for (PrimitiveType type : {PrimitiveType::kC128, PrimitiveType::kC64}) {
    const double tolerance = type == PrimitiveType::kC128 ? 1e-14 : 1e-6;
    const Shape shape(type, {2, 3});
    const Literal x = ComplexLiteral(type, {2, 3}, Of(kX));
    const Literal y = ComplexLiteral(type, {2, 3}, Of(kY));
    for (const ComplexCase& c : kUnaryCases) {
      OpHarness h;
      ASSERT_OK_AND_ASSIGN(Literal r, h.Run(c.opcode, shape, {y}));
      ExpectValues(r, c.expected, tolerance, std::string(OpcodeName(c.opcode)));
    }
    for (const ComplexCase& c : kBinaryCases) {
      OpHarness h;
      ASSERT_OK_AND_ASSIGN(Literal r, h.Run(c.opcode, shape, {x, y}));
      ExpectValues(r, c.expected, tolerance, std::string(OpcodeName(c.opcode)));
    }
    OpHarness h;
    ASSERT_OK_AND_ASSIGN(Literal sign, h.Run(Opcode::kSign, shape, {x}));
    ExpectValues(sign, Of(kSignX), tolerance, "sign");
    const PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    ASSERT_OK_AND_ASSIGN(Literal abs, h.Run(Opcode::kAbs, Shape(part, {2, 3}), {x}));
    ExpectValues(abs, Of(kAbsX), tolerance, "abs");
    ASSERT_OK_AND_ASSIGN(Literal eq, h.Run(Opcode::kCompare, Shape(PrimitiveType::kPred, {2, 3}),
                                           {x, x}, {{"direction", AttrValue(std::string("EQ"))}}));
    ASSERT_OK_AND_ASSIGN(Literal ne, h.Run(Opcode::kCompare, Shape(PrimitiveType::kPred, {2, 3}),
                                           {x, y}, {{"direction", AttrValue(std::string("NE"))}}));
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_TRUE(eq.data<bool>()[i]) << i;
      EXPECT_TRUE(ne.data<bool>()[i]) << i;
    }
    EXPECT_THAT(h.Run(Opcode::kCompare, Shape(PrimitiveType::kPred, {2, 3}), {x, y},
                      {{"direction", AttrValue(std::string("LT"))}})
                    .status()
                    .message(),
                HasSubstr("EQ or NE only"));
  }
}

constexpr char kModule[] = R"(HloModule m
%add (a: c128[], b: c128[]) -> c128[] {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  ROOT %s = c128[] add(%a, %b)
}
ENTRY %e {
  %x = c128[2,3] parameter(0)
  %y = c128[2,3] parameter(1)
  %dot = c128[2,2] dot(%x, %y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %zero = c128[] constant((0, 0))
  %sum = c128[2] reduce(%x, %zero), dimensions={1}, to_apply=%add
  %re = f64[2,3] real(%x)
  %im = f64[2,3] imag(%x)
  %back = c128[2,3] complex(%re, %im)
  %t = c128[3,2] transpose(%back), dimensions={1,0}
  %r = c128[6] reshape(%t)
  %s = c128[2] slice(%r), slice={[1:3]}
  %w = c64[2,3] convert(%re)
  ROOT %out = (c128[2,2], c128[2], c128[2,3], c128[2], c64[2,3]) tuple(%dot, %sum, %back, %s, %w)
})";

TEST(ComplexEvalTest, DotSumPartsAndDataMovementRunOnTheInterpreter) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kModule));
  ASSERT_OK(CheckRunnableTypes(*module));
  const Literal x = ComplexLiteral(PrimitiveType::kC128, {2, 3}, Of(kX));
  const Literal y = ComplexLiteral(PrimitiveType::kC128, {2, 3}, Of(kY));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {x, y}));
  ExpectValues(out.element(0), Of(kDotXY), 1e-14, "dot");
  ExpectValues(out.element(1), Of(kSumX), 1e-14, "sum");
  EXPECT_EQ(out.element(2), x);
  // x^T flattened: x[0][0], x[1][0], x[0][1], ...; elements 1 and 2.
  EXPECT_EQ(GetComplex(out.element(3), 0), GetComplex(x, 3));
  EXPECT_EQ(GetComplex(out.element(3), 1), GetComplex(x, 1));
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(GetComplex(out.element(4), i), Complex128(GetComplex(x, i).real(), 0)) << i;
  }
}

TEST(ComplexEvalTest, FftMatchesNumPy) {
  const Literal z = ComplexLiteral(PrimitiveType::kC64, {2, 3, 4}, Of(kZ));
  const Literal r = RealLiteral(PrimitiveType::kF32, {2, 3, 4}, Of(kR));
  const Literal half = ComplexLiteral(PrimitiveType::kC64, {2, 3, 3}, Of(kHalf));
  for (const FftCase& c : kFftCases) {
    const std::string input = c.input;
    const Literal& x = input == "z" ? z : input == "r" ? r : half;
    const PrimitiveType type = std::string(c.fft_type) == "IRFFT" ? PrimitiveType::kF32
                                                                   : PrimitiveType::kC64;
    OpHarness h;
    ASSERT_OK_AND_ASSIGN(
        Literal result,
        h.Run(Opcode::kFft, Shape(type, c.result_dims), {x},
              {{"fft_type", AttrValue(std::string(c.fft_type))},
               {"fft_length", AttrValue(IntList(c.fft_length))}}));
    ExpectValues(result, c.expected, 1e-5,
                 std::string(c.fft_type) + " over " + std::to_string(c.fft_length.size()) +
                     " dims");
  }
}

TEST(ComplexEvalTest, OpsWithoutComplexSemanticsAreRefusedBeforeRunning) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = c64[4] parameter(0)
  %i = s32[2,1] constant({ {0}, {2} })
  ROOT %g = c64[2] gather(%x, %i), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
})"));
  EXPECT_THAT(std::string(CheckRunnableTypes(*module).message()),
              HasSubstr("unsupported: complex gather"));
}

}  // namespace
}  // namespace sharc::hlo
