// Data-movement and source ops against the interpreter for every dtype, on
// odd shapes: ranks 0 to 5, empty dims, strided slices, negative and interior
// padding, clamped dynamic starts. One kernel per dtype.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;

constexpr const char* kShapeModule = R"(
HloModule shapes_T
ENTRY main {
  a = T[2,3,5,7] parameter(0)
  b = T[] parameter(1)
  e = T[0,3] parameter(2)
  f = T[3,1,2,1,3] parameter(3)
  g = T[4,3] parameter(4)
  u = T[1,2,3,4] parameter(5)
  k0 = s32[] parameter(6)
  k1 = s32[] parameter(7)
  k2 = s64[] parameter(8)
  k3 = u8[] parameter(9)
  r0 = T[4,19] broadcast(b), dimensions={}
  r1 = T[2,3,4,5,7] broadcast(a), dimensions={0,1,3,4}
  r2 = T[6,35] reshape(a)
  r3 = T[210] reshape(a)
  r4 = T[5,42] reshape(a)
  i16 = f16[3,17] iota(), iota_dimension=0
  r5 = T[18] reshape(f)
  r6 = T[1,1] reshape(b)
  r7 = T[7,3,2,5] transpose(a), dimensions={3,1,0,2}
  r8 = T[2,2,3,2] slice(a), slice={[0:2], [1:3], [0:5:2], [1:7:3]}
  r9 = T[5,3,9,9] pad(a, b), padding=1_2x0_0x-1_1_1x2_0
  r10 = T[8,3] concatenate(g, e, g), dimensions={0}
  r11 = T[2,3,5,7] reverse(a), dimensions={0,3}
  r12 = T[1,2,3,4] dynamic-slice(a, k0, k1, k2, k3), dynamic_slice_sizes={1,2,3,4}
  r13 = T[2,3,5,7] dynamic-update-slice(a, u, k0, k1, k2, k3)
  r14 = s32[3,17] iota(), iota_dimension=1
  r15 = T[2,0,3] broadcast(e), dimensions={1,2}
  r16 = T[0,3] reverse(e), dimensions={0}
  r17 = T[2,3] pad(e, b), padding=1_1x0_0
  r18 = T[3,3,1,2,1] transpose(f), dimensions={0,4,1,2,3}
  r19 = T[] reshape(r6)
  r20 = T[2,3,5,7] copy(a)
  ROOT out = (T[4,19], T[2,3,4,5,7], T[6,35], T[210], T[5,42], T[18], T[1,1], T[7,3,2,5],
              T[2,2,3,2], T[5,3,9,9], T[8,3], T[2,3,5,7], T[1,2,3,4], T[2,3,5,7], s32[3,17],
              T[2,0,3], T[0,3], T[2,3], T[3,3,1,2,1], T[], T[2,3,5,7], f16[3,17])
    tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15, r16, r17,
          r18, r19, r20, i16)
}
)";

class ShapeLoweringTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ShapeLoweringTest, EqualsInterpreter) {
  const std::string text =
      absl::StrReplaceAll(kShapeModule, {{"T[", hlo::PrimitiveTypeName(GetParam()) + "["},
                                         {"shapes_T", "shapes"}});
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  for (uint64_t seed : {1, 2, 3}) {
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, seed);
    // Starts: in range, negative, far out of range (all clamped alike).
    args[6].SetFromInt64(0, seed == 1 ? 0 : seed == 2 ? -5 : 1000);
    args[7].SetFromInt64(0, seed == 1 ? 1 : seed == 2 ? 7 : -1);
    args[8].SetFromInt64(0, seed == 1 ? 2 : seed == 2 ? int64_t{1} << 40 : 1);
    args[9].SetFromInt64(0, seed == 1 ? 3 : seed == 2 ? 200 : 1);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "shape ops"))
        << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ShapeLoweringTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// (Names with '.', which Halide reserves, are part of the check.)
TEST(ConstantLoweringTest, ScalarAndArrayConstantsOfEveryKind) {
  const std::string text = R"(
HloModule constants
ENTRY main {
  x = f32[2,3] parameter(0)
  c0 = f32[2,3] constant({{1.5, -2, 3}, {0.25, 1e30, -0}})
  c1 = f32[] constant(2.5)
  c2.table.0 = s64[3] constant({-9223372036854775808, 7, -1})
  c3 = pred[2] constant({true, false})
  c4 = u64[] constant(18446744073709551615)
  c5 = bf16[2] constant({1.5, -3})
  c6 = f16[] constant(nan)
  b1 = f32[2,3] broadcast(c1), dimensions={}
  m = f32[2,3] multiply(x, c0)
  r0 = f32[2,3] add(m, b1)
  r1 = s64[3] negate(c2.table.0)
  r2 = pred[2] not(c3)
  r3 = u64[] add(c4, c4)
  r4 = bf16[2] multiply(c5, c5)
  r5 = f16[] add(c6, c6)
  ROOT out = (f32[2,3], s64[3], pred[2], u64[], bf16[2], f16[]) tuple(r0, r1, r2, r3, r4, r5)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 5);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "constants"));
}

// Reshapes map indices run by run (codegen/shape_lowerings.cc): unit dims
// added and dropped anywhere, splits and merges beside them, runs of
// several dims on both sides, and round trips through a flat vector.
TEST(ReshapeLoweringTest, EveryRunFormEqualsInterpreter) {
  constexpr const char* kReshapes = R"(
HloModule reshapes
ENTRY main {
  a = f32[6,1,4,1,5] parameter(0)
  r0 = f32[1,2,3,20,1] reshape(a)
  r1 = f32[120] reshape(a)
  r2 = f32[6,20] reshape(a)
  r3 = f32[3,2,1,4,5,1] reshape(a)
  r4 = f32[1,6,4,5,1,1] reshape(a)
  r5 = f32[4,30] reshape(a)
  r6 = f32[6,4,5] reshape(r3)
  r7 = f32[2,1,60] reshape(r1)
  r8 = f32[6,1,4,1,5] reshape(r7)
  ROOT out = (f32[1,2,3,20,1], f32[120], f32[6,20], f32[3,2,1,4,5,1], f32[1,6,4,5,1,1],
              f32[4,30], f32[6,4,5], f32[2,1,60], f32[6,1,4,1,5])
    tuple(r0, r1, r2, r3, r4, r5, r6, r7, r8)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kReshapes));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 6);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "reshapes"));
}

// The frontend's keepdims pattern: a row sum reshaped to [rows, 1] and back
// before it is broadcast along the row. Each row's sum must be computed once
// inside the row loop, not over every row for each row (the loop nest has no
// loop over the sum's rows inside the output's row loop), and equal the
// interpreter.
TEST(ReshapeLoweringTest, KeepdimsRowReductionIsComputedOncePerRow) {
  constexpr const char* kKeepdims = R"(
HloModule keepdims
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  x = f32[96,40] parameter(0)
  zero = f32[] constant(0)
  row_sum = f32[96] reduce(x, zero), dimensions={1}, to_apply=add
  kept = f32[96,1] reshape(row_sum)
  flat = f32[96] reshape(kept)
  spread = f32[96,40] broadcast(flat), dimensions={0}
  ROOT centred = f32[96,40] subtract(x, spread)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kKeepdims));
  ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*module));
  // With a flat index (`row % 96`) Halide computed row_sum over all 96 rows
  // at every row: a loop of extent 96 inside the row loop.
  EXPECT_THAT(nest, ::testing::Not(::testing::HasSubstr("in [0, 95]"))) << nest;
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 7);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 1e-5, "keepdims"));
}

}  // namespace
}  // namespace sharc::codegen
