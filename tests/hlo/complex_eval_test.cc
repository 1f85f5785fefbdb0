// Complex values at run time (c64, c128): XLA's complex elementwise ops,
// dot, convolution, reductions, sort, gather/scatter, loops,
// complex/real/imag, convert and fft evaluate as NumPy computes them
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
    {Opcode::kSin, {2.564458405835377, -2.65373338938083, -1.7920852142496468, 0.5051209087665124, -0.5819954525995883, 2.0630853133346414, -0.9974949866040544, 0.0, -0.7686335646933926, 0.3812796346521782, -0.7686335646933926, 0.3812796346521782}},
    {Opcode::kCos, {2.7527567096909453, 2.472208631182566, 0.5954622781500442, 1.5201965686577297, 2.2792788971607405, 0.526792167549771, 0.0707372016677029, 0.0, 0.8250713669946073, 0.35519875789073846, 0.8250713669946073, 0.35519875789073846}},
    {Opcode::kTan, {0.03643288937571831, -0.996747399904603, -0.11225957033593745, 1.1348788112820032, -0.04380217692516719, 0.9152719132613141, -14.10141994717172, 0.0, -0.618096394806202, 0.7282118012804722, -0.618096394806202, 0.7282118012804722}},
    {Opcode::kTanh, {1.2534271713346836, 0.44550132143674176, -1.1348788112820032, 0.11225957033593745, -3.7861089368147747, 1.0253320612293393, -0.9051482536448665, 0.0, -0.7360841705511909, 0.29089346182961806, -0.7360841705511909, 0.29089346182961806}},
    {Opcode::kExpm1, {-1.8809828598836125, -1.9249826676958306, -0.9096586306164685, 0.27188864559191706, -0.944909811948913, 0.7768498766770381, -0.7768698398515702, 0.0, -0.5854593504942165, 0.22646458896647162, -0.5854593504942165, 0.22646458896647162}},
    {Opcode::kLog1p, {0.9773995482362797, -0.8519663271732721, 0.24275390789085033, 1.7681918866447774, 0.5170368837652694, 1.1071487177940904, -0.6931471805599453, 3.141592653589793, -0.5815754049028404, 1.1071487177940904, -0.5815754049028404, 1.1071487177940904}},
    {Opcode::kLogistic, {0.9680037656300103, -0.5175069450797777, 0.13654638371082012, 0.21531168206250928, 0.38540024148542473, 0.45252221280695604, 0.18242552380635635, 0.0, 0.31072373502641987, 0.1103514883691212, 0.31072373502641987, 0.1103514883691212}},
    {Opcode::kRsqrt, {0.5623824990290673, 0.3897313351147728, 0.28782409988501484, -0.6948688455202312, 0.5241602050486669, -0.6187503766986883, 0.0, -0.8164965809277261, 0.30522407291491205, -1.0080866320727055, 0.30522407291491205, -1.0080866320727055}},
};
constexpr double kSignX[] = {0.0, 0.0, -0.813733471206735, -0.5812381937190965, 0.3511234415883917, 0.9363291775690445, -0.0, -1.0, 0.9486832980505138, 0.31622776601683794, -0.658504607868518, 0.7525766947068778};
const ComplexCase kBinaryCases[] = {
    {Opcode::kAdd, {0.75, -2.0, -3.0, 0.0, 0.5, 3.5, -1.5, -0.75, 0.0, 0.75, -2.5, 2.5}},
    {Opcode::kSubtract, {-0.75, 2.0, -0.5, -2.5, 1.0, 0.5, 1.5, -0.75, 1.5, -0.25, -1.0, 1.5}},
    {Opcode::kMultiply, {0.0, 0.0, 3.75, -0.625, -3.1875, 0.625, 0.0, 1.125, -0.6875, 0.1875, 0.3125, -2.375}},
    {Opcode::kDivide, {-0.0, 0.0, 0.2, 1.2000000000000002, 1.216216216216216, -0.7027027027027025, -0.0, 0.5, -0.5384615384615385, -0.6923076923076923, 2.8461538461538463, -0.7692307692307694}},
};
constexpr double kAbsX[] = {0.0, 2.1505813167606567, 2.1360009363293826, 0.75, 0.7905694150420949, 2.6575364531836625};
constexpr double kPowerYX[] = {1.0, 0.0, 0.8615133258056588, 6.963222485034511, -0.02293301009713013, 0.035818750525861386, 10.066627101634362, -3.1592399855814657, -0.15296628597934273, 0.46401169441036744, -0.0002610329488221653, 0.007254432562831468};
constexpr double kAtan2Y[] = {0.0, -1.75, 0.75, 0.0, 0.75, -1.75};
constexpr double kAtan2X[] = {0.75, -1.25, -0.25, -1.5, -0.75, -0.75};
constexpr double kAtan2Real[] = {0.0, -2.191045812777718, 1.892546881191539, 3.141592653589793, 2.356194490192345, -1.97568811307998};
constexpr double kTiny[] = {1e-09, 2e-09, -3e-10, 1e-12};
constexpr double kExpm1Tiny[] = {9.999999985e-10, 2.0000000020000004e-09, -2.999999999550005e-10, 9.999999997e-13};
constexpr double kLog1pTiny[] = {1.0000000015e-09, 1.9999999980000002e-09, -3.000000000449995e-10, 1.0000000003e-12};
constexpr double kProductX[] = {-5.546875, 1.484375, -0.46875, 1.125};
constexpr double kConvYX[] = {-7.25, 1.0, 0.5625, 0.0, 2.3125, -2.3125};
constexpr double kSortedXY[] = {-1.75, -1.25, -1.75, 2.0, -1.5, 0.0, -1.25, 1.25, -0.75, 0.5, -0.75, 0.5, -0.25, 1.5, -0.0, -0.75, 0.0, 0.0, 0.75, -2.0, 0.75, 0.25, 0.75, 2.0};
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

// Real values as complex ones with zero imaginary parts, interleaved.
std::vector<double> Interleave(const std::vector<double>& reals) {
  std::vector<double> parts;
  for (double r : reals) parts.insert(parts.end(), {r, 0.0});
  return parts;
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
    ASSERT_OK_AND_ASSIGN(Literal power, h.Run(Opcode::kPower, shape, {y, x}));
    ExpectValues(power, Of(kPowerYX), tolerance, "power");
    const PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    ASSERT_OK_AND_ASSIGN(
        Literal atan2,
        h.Run(Opcode::kAtan2, shape,
              {ComplexLiteral(type, {2, 3}, Interleave(Of(kAtan2Y))),
               ComplexLiteral(type, {2, 3}, Interleave(Of(kAtan2X)))}));
    ExpectValues(atan2, Interleave(Of(kAtan2Real)), tolerance, "atan2");
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

// exp(z) - 1 and log(1 + z) of tiny z keep all their digits (computed
// directly they cancel, leaving about 7 correct digits of 16).
TEST(ComplexEvalTest, Expm1AndLog1pAreAccurateNearZero) {
  const Literal tiny = ComplexLiteral(PrimitiveType::kC128, {2}, Of(kTiny));
  for (auto [op, expected] : {std::pair{Opcode::kExpm1, Of(kExpm1Tiny)},
                              std::pair{Opcode::kLog1p, Of(kLog1pTiny)}}) {
    OpHarness h;
    ASSERT_OK_AND_ASSIGN(Literal r, h.Run(op, tiny.shape(), {tiny}));
    for (int64_t i = 0; i < 2; ++i) {
      const Complex128 want(expected[2 * i], expected[2 * i + 1]);
      EXPECT_LE(std::abs(GetComplex(r, i) - want), 1e-12 * std::abs(want))
          << OpcodeName(op) << " element " << i << ": got " << GetComplex(r, i);
    }
  }
}

// The ops that call computations or move elements run on complex values
// too: a product reduce, a convolution, a lexicographic sort (jnp.sort's
// order for complex values), gather, scatter-add, iota and a while loop.
constexpr char kProgramsModule[] = R"(HloModule m
%mul (a: c128[], b: c128[]) -> c128[] {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  ROOT %m = c128[] multiply(%a, %b)
}
%add (a: c128[], b: c128[]) -> c128[] {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  ROOT %s = c128[] add(%a, %b)
}
%less (a: c128[], b: c128[]) -> pred[] {
  %a = c128[] parameter(0)
  %b = c128[] parameter(1)
  %ra = f64[] real(%a)
  %rb = f64[] real(%b)
  %ia = f64[] imag(%a)
  %ib = f64[] imag(%b)
  %lt_re = pred[] compare(%ra, %rb), direction=LT
  %eq_re = pred[] compare(%ra, %rb), direction=EQ
  %lt_im = pred[] compare(%ia, %ib), direction=LT
  %tie = pred[] and(%eq_re, %lt_im)
  ROOT %lt = pred[] or(%lt_re, %tie)
}
%cond (s: (s32[], c128[4])) -> pred[] {
  %s = (s32[], c128[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], c128[4])) -> (s32[], c128[4]) {
  %s = (s32[], c128[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = c128[4] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %step = c128[] constant((0, 1))
  %steps = c128[4] broadcast(%step), dimensions={}
  %w = c128[4] multiply(%v, %steps)
  ROOT %t = (s32[], c128[4]) tuple(%j, %w)
}
ENTRY %e {
  %x = c128[2,3] parameter(0)
  %y = c128[2,3] parameter(1)
  %one = c128[] constant((1, 0))
  %product = c128[2] reduce(%y, %one), dimensions={1}, to_apply=%mul
  %y0 = c128[1,3] slice(%y), slice={[0:1], [0:3]}
  %x0 = c128[1,3] slice(%x), slice={[0:1], [0:3]}
  %input = c128[1,1,3] reshape(%y0)
  %kernel = c128[1,1,3] reshape(%x0)
  %conv = c128[1,1,3] convolution(%input, %kernel), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0
  %xf = c128[6] reshape(%x)
  %yf = c128[6] reshape(%y)
  %both = c128[12] concatenate(%xf, %yf), dimensions={0}
  %sorted = c128[12] sort(%both), dimensions={0}, to_apply=%less
  %at = s32[2,1] constant({ {4}, {1} })
  %gathered = c128[2] gather(%xf, %at), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1}
  %iota = c128[4] iota(), iota_dimension=0
  %twice = s32[2,1] constant({ {1}, {1} })
  %scattered = c128[4] scatter(%iota, %twice, %gathered), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
  %zero = s32[] constant(0)
  %init = (s32[], c128[4]) tuple(%zero, %scattered)
  %loop = (s32[], c128[4]) while(%init), condition=%cond, body=%body
  %turned = c128[4] get-tuple-element(%loop), index=1
  ROOT %out = (c128[2], c128[1,1,3], c128[12], c128[4], c128[4]) tuple(%product, %conv, %sorted, %scattered, %turned)
})";

TEST(ComplexEvalTest, ReducersConvolutionSortGatherScatterAndLoopsMatchNumPy) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kProgramsModule));
  ASSERT_OK(CheckRunnableTypes(*module));
  const Literal x = ComplexLiteral(PrimitiveType::kC128, {2, 3}, Of(kX));
  const Literal y = ComplexLiteral(PrimitiveType::kC128, {2, 3}, Of(kY));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {x, y}));
  ExpectValues(out.element(0), Of(kProductX), 1e-14, "product reduce");
  ExpectValues(out.element(1), Of(kConvYX), 1e-14, "convolution");
  ExpectValues(out.element(2), Of(kSortedXY), 0, "sort");
  // iota (0, 1, 2, 3) with x[4] + x[1] added at 1; then times i three times (-i).
  const Complex128 at1 = Complex128(1) + GetComplex(x, 4) + GetComplex(x, 1);
  const std::vector<Complex128> scattered = {0, at1, 2, 3};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(GetComplex(out.element(3), i), scattered[static_cast<size_t>(i)]) << i;
    EXPECT_EQ(GetComplex(out.element(4), i), scattered[static_cast<size_t>(i)] * Complex128(0, -1))
        << i;
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

// ragged-dot of complex values is the dot of each row block with its
// group's matrix; a MapReduce mean of complex values divides both parts.
TEST(ComplexEvalTest, RaggedDotAndMapReduceMeanOfComplexValues) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m, mesh={clients=2}
ENTRY %e {
  %x = c128[3,2] parameter(0)
  %w = c128[2,2,2] parameter(1)
  %g = s32[2] constant({2, 1})
  %r = c128[3,2] ragged-dot(%x, %w, %g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  %x01 = c128[2,2] slice(%x), slice={[0:2], [0:2]}
  %x2 = c128[1,2] slice(%x), slice={[2:3], [0:2]}
  %w0 = c128[1,2,2] slice(%w), slice={[0:1], [0:2], [0:2]}
  %w1 = c128[1,2,2] slice(%w), slice={[1:2], [0:2], [0:2]}
  %m0 = c128[2,2] reshape(%w0)
  %m1 = c128[2,2] reshape(%w1)
  %d0 = c128[2,2] dot(%x01, %m0), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %d1 = c128[1,2] dot(%x2, %m1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %both = c128[3,2] concatenate(%d0, %d1), dimensions={0}
  %mean = c128[2,2] mapreduce.mean(%w), placement=clients
  ROOT %t = (c128[3,2], c128[3,2], c128[2,2]) tuple(%r, %both, %mean)
})"));
  ASSERT_OK(CheckRunnableTypes(*module));
  const Literal x = ComplexLiteral(PrimitiveType::kC128, {3, 2}, Of(kX));
  std::vector<double> w_parts(Of(kY));
  for (double v : Of(kX)) w_parts.push_back(-v);  // kY then -kX: 16 values of 2 parts
  w_parts.resize(16);
  const Literal w = ComplexLiteral(PrimitiveType::kC128, {2, 2, 2}, w_parts);
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {x, w}));
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(GetComplex(out.element(0), i), GetComplex(out.element(1), i)) << i;
  }
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(GetComplex(out.element(2), i), (GetComplex(w, i) + GetComplex(w, i + 4)) / 2.0) << i;
  }
}

// topk orders values, which complex values have no order for.
TEST(ComplexEvalTest, OpsWithoutComplexSemanticsAreRefusedBeforeRunning) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
ENTRY %e {
  %x = c64[4,8] parameter(0)
  ROOT %t = (c64[4,2], s32[4,2]) topk(%x), k=2, largest=true
})"));
  EXPECT_THAT(std::string(CheckRunnableTypes(*module).message()),
              HasSubstr("unsupported: complex topk"));
}

}  // namespace
}  // namespace sharc::hlo
