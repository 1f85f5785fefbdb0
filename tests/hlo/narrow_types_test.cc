// The narrow types (hlo/ir/narrow_types.h): every bit pattern of every
// 8- and 4-bit float decodes and encodes back to itself (NaNs to the type's
// one NaN), the largest values and the special patterns are ml_dtypes'
// (written out below by hand from each format), rounding is to nearest
// even, overflow goes to infinity or NaN, and sub-byte integers wrap or
// saturate as XLA converts. Programs in these types run: arithmetic in
// f32 / s32 between converts, as XLA's CPU backend upcasts.
#include <cmath>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/ir/narrow_types.h"
#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/runnable_types.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::HasSubstr;
using T = PrimitiveType;

constexpr T kNarrowFloats[] = {T::kF8E5M2,     T::kF8E4M3,      T::kF8E3M4,
                               T::kF8E4M3FN,   T::kF8E4M3FNUZ,  T::kF8E5M2FNUZ,
                               T::kF8E4M3B11FNUZ, T::kF8E8M0FNU, T::kF4E2M1FN};

TEST(NarrowTypesTest, EveryPatternRoundTrips) {
  for (T type : kNarrowFloats) {
    const int patterns = type == T::kF4E2M1FN ? 16 : 256;
    int nans = 0;
    for (int bits = 0; bits < patterns; ++bits) {
      const double v = NarrowFloatToDouble(type, static_cast<uint8_t>(bits));
      const uint8_t back = NarrowFloatFromDouble(type, v);
      if (std::isnan(v)) {
        ++nans;
        EXPECT_TRUE(std::isnan(NarrowFloatToDouble(type, back))) << PrimitiveTypeName(type);
        continue;
      }
      EXPECT_EQ(back, bits) << PrimitiveTypeName(type) << " pattern " << bits << " = " << v;
    }
    // NaN patterns: IEEE-like types have 2 * (2^m - 1) of them, fn one per
    // sign, fnuz and e8m0 one, f4e2m1fn none.
    const int expected_nans = type == T::kF8E5M2   ? 6
                              : type == T::kF8E4M3 ? 14
                              : type == T::kF8E3M4 ? 30
                              : type == T::kF8E4M3FN ? 2
                              : type == T::kF4E2M1FN ? 0
                                                     : 1;
    EXPECT_EQ(nans, expected_nans) << PrimitiveTypeName(type);
  }
}

TEST(NarrowTypesTest, LargestValuesAndSpecialPatterns) {
  struct Case {
    T type;
    double max;
    uint8_t max_bits;
  };
  const Case cases[] = {{T::kF8E5M2, 57344, 0x7b},        {T::kF8E4M3, 240, 0x77},
                        {T::kF8E3M4, 15.5, 0x6f},         {T::kF8E4M3FN, 448, 0x7e},
                        {T::kF8E4M3FNUZ, 240, 0x7f},      {T::kF8E5M2FNUZ, 57344, 0x7f},
                        {T::kF8E4M3B11FNUZ, 30, 0x7f},    {T::kF4E2M1FN, 6, 0x7}};
  for (const Case& c : cases) {
    EXPECT_EQ(NarrowFloatToDouble(c.type, c.max_bits), c.max) << PrimitiveTypeName(c.type);
    EXPECT_EQ(NarrowFloatFromDouble(c.type, c.max), c.max_bits) << PrimitiveTypeName(c.type);
  }
  EXPECT_TRUE(std::isinf(NarrowFloatToDouble(T::kF8E5M2, 0x7c)));
  EXPECT_TRUE(std::isnan(NarrowFloatToDouble(T::kF8E4M3FN, 0x7f)));
  EXPECT_TRUE(std::isnan(NarrowFloatToDouble(T::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E8M0FNU, 0x7f), 1.0);
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E8M0FNU, 0x00), std::ldexp(1.0, -127));
  // Smallest subnormals: e4m3fn 2^-9, e5m2 2^-16.
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E4M3FN, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E5M2, 0x01), std::ldexp(1.0, -16));
}

TEST(NarrowTypesTest, RoundsToNearestEvenAndOverflowsAsTheTypeCan) {
  // e4m3fn near 1: spacing 1/8. 1 + 1/16 ties to 1 (even), 1 + 3/16 to 1.25.
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, 1.0625)), 1.0);
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, 1.1875)), 1.25);
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, 0.1)),
            0.1015625);
  // Beyond the largest value: inf where the type has it, NaN where not;
  // f4e2m1fn has neither and keeps its largest value.
  EXPECT_TRUE(std::isinf(NarrowFloatToDouble(T::kF8E5M2, NarrowFloatFromDouble(T::kF8E5M2, 1e6))));
  EXPECT_TRUE(std::isnan(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, 1e6))));
  EXPECT_EQ(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, 460)), 448);
  EXPECT_EQ(NarrowFloatToDouble(T::kF4E2M1FN, NarrowFloatFromDouble(T::kF4E2M1FN, 100)), 6);
  // 2.5 lies between 2 and 3 in f4e2m1fn: to even, 2.
  EXPECT_EQ(NarrowFloatToDouble(T::kF4E2M1FN, NarrowFloatFromDouble(T::kF4E2M1FN, 2.5)), 2);
  // Negative zero where the type has one; +0 in fnuz types.
  EXPECT_TRUE(std::signbit(NarrowFloatToDouble(T::kF8E4M3FN, NarrowFloatFromDouble(T::kF8E4M3FN, -0.0))));
  EXPECT_EQ(NarrowFloatFromDouble(T::kF8E4M3FNUZ, -0.0), 0);
  EXPECT_EQ(NarrowFloatFromDouble(T::kF8E4M3FNUZ, -1e-9), 0);
}

TEST(NarrowTypesTest, SubByteIntegersWrap) {
  EXPECT_EQ(SubByteToInt64(T::kS4, SubByteFromInt64(T::kS4, 9)), -7);
  EXPECT_EQ(SubByteToInt64(T::kU4, SubByteFromInt64(T::kU4, 17)), 1);
  EXPECT_EQ(SubByteToInt64(T::kS2, SubByteFromInt64(T::kS2, -3)), 1);
  EXPECT_EQ(SubByteToInt64(T::kU2, SubByteFromInt64(T::kU2, 6)), 2);
}

constexpr char kProgram[] = R"(HloModule m
ENTRY %e {
  %x = f32[6] constant({0.1, 1.0625, -3, 500, 1e-9, 2.5})
  %q = f8e4m3fn[6] convert(%x)
  %sq = f8e4m3fn[6] multiply(%q, %q)
  %sqf = f32[6] convert(%sq)
  %qf = f32[6] convert(%q)
  %i = s4[6] convert(%x)
  %n = s32[6] constant({9, -9, 7, 8, -8, 15})
  %j = s4[6] convert(%n)
  %k = s4[6] add(%j, %j)
  %kf = s32[6] convert(%k)
  %if = s32[6] convert(%i)
  %w = f8e4m3fn[2,3] reshape(%q)
  %d = f32[2,2] dot(%w, %w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT %t = (f32[6], f32[6], s32[6], s32[6], f32[2,2]) tuple(%qf, %sqf, %if, %kf, %d)
})";

TEST(NarrowTypesTest, ProgramsComputeBetweenConverts) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kProgram));
  ASSERT_OK(LowerForCompute(*module));
  ASSERT_OK(CheckRunnableTypes(*module));
  // The multiply, add and dot now compute in f32 / s32.
  const std::string lowered = PrintModule(*module);
  EXPECT_THAT(lowered, HasSubstr("f32[6] multiply("));
  EXPECT_THAT(lowered, HasSubstr("s32[6] add("));
  ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, {}));
  auto values = [&](int k) {
    std::vector<double> v;
    for (int64_t i = 0; i < out.element(k).num_elements(); ++i) {
      v.push_back(out.element(k).GetAsDouble(i));
    }
    return v;
  };
  // 500 overflows e4m3fn (max 448, no inf): NaN; 1e-9 underflows to 0.
  const std::vector<double> q = values(0);
  EXPECT_EQ(q[0], 0.1015625);
  EXPECT_EQ(q[1], 1.0);
  EXPECT_EQ(q[2], -3.0);
  EXPECT_TRUE(std::isnan(q[3]));
  EXPECT_EQ(q[4], 0.0);
  EXPECT_EQ(q[5], 2.5);
  // Squares round once to e4m3fn: 0.1015625^2 = 0.0103 is subnormal there
  // (below 2^-6, spacing 2^-9): 5 * 2^-9.
  const std::vector<double> sq = values(1);
  EXPECT_EQ(sq[0], 5 * std::ldexp(1.0, -9));
  EXPECT_EQ(sq[2], 9.0);
  EXPECT_EQ(sq[5], 6.0);  // 6.25 -> 6 (spacing 0.5 at [4, 8))
  // f32 -> s4 saturates to [-8, 7] (NaN is 0); s32 -> s4 keeps the low bits.
  EXPECT_THAT(values(2), ::testing::ElementsAre(0, 1, -3, 7, 0, 2));
  // 9 -> -7, doubled -14 -> 2; -9 -> 7 -> 14 -> -2; 7 -> 14 -> -2; 8 -> -8 -> -16 -> 0;
  // -8 -> -16 -> 0; 15 -> -1 -> -2.
  EXPECT_THAT(values(3), ::testing::ElementsAre(2, -2, -2, 0, 0, -2));
  // The dot of e4m3fn rows sums in f32: 0.1015625^2 + 1 + 9.
  EXPECT_EQ(values(4)[0], 0.1015625 * 0.1015625 + 1 + 9);
}

TEST(NarrowTypesTest, OpsThatCallComputationsAreRefusedByName) {
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(R"(HloModule m
%add (a: f8e4m3fn[], b: f8e4m3fn[]) -> f8e4m3fn[] {
  %a = f8e4m3fn[] parameter(0)
  %b = f8e4m3fn[] parameter(1)
  ROOT %s = f8e4m3fn[] add(%a, %b)
}
ENTRY %e {
  %x = f8e4m3fn[4] parameter(0)
  %z = f8e4m3fn[] constant(0)
  ROOT %r = f8e4m3fn[] reduce(%x, %z), dimensions={0}, to_apply=%add
})"));
  ASSERT_OK(LowerForCompute(*module));
  EXPECT_THAT(std::string(CheckRunnableTypes(*module).message()),
              HasSubstr("unsupported: f8e4m3fn reduce"));
}

}  // namespace
}  // namespace sharc::hlo
