// The Halide lowering of convolution against the reference interpreter
// (hlo/ops/convolution_op.cc), over the forms XLA writes: NHWC and NCHW
// layouts, strides, padding (negative too), lhs dilation (transposed
// convolutions), rhs dilation (atrous), feature and batch groups, a reversed
// window, 1-D and 3-D windows, integer, bf16 and f64 types, and a fused
// elementwise epilogue; plus the register-tiled loop nest of the f32 forms.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

struct ConvCase {
  const char* name;
  const char* text;
  double rtol, atol;
};

// Each module's entry is one convolution (with an epilogue in one case),
// compiled as one kernel. Inputs lie in [-4, 4): f32 sums of up to 72 terms
// of magnitude up to 16 differ from the interpreter's double sum by up to
// about 72 * 16 * 2^-24, hence the absolute tolerance.
const ConvCase kCases[] = {
    {"nhwc_same_padding", R"(
HloModule m
ENTRY e {
  x = f32[2,10,12,8] parameter(0)
  w = f32[3,3,8,32] parameter(1)
  ROOT c = f32[2,10,12,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
     1e-5, 2e-4},
    {"nchw_strided", R"(
HloModule m
ENTRY e {
  x = f32[2,4,17,70] parameter(0)
  w = f32[24,4,3,5] parameter(1)
  ROOT c = f32[2,24,8,33] convolution(x, w), window={size=3x5 stride=2x2}, dim_labels=bf01_oi01->bf01
})",
     1e-5, 2e-4},
    {"transposed_atrous_grouped_1d", R"(
HloModule m
ENTRY e {
  x = f32[3,9,4] parameter(0)
  w = f32[4,2,6] parameter(1)
  ROOT c = f32[3,6,4] convolution(x, w), window={size=4 stride=3 pad=2_-1 lhs_dilate=2 rhs_dilate=2}, dim_labels=b0f_0io->bf0, feature_group_count=2
})",
     1e-5, 2e-4},
    {"batch_groups", R"(
HloModule m
ENTRY e {
  x = f32[4,5,3] parameter(0)
  w = f32[2,3,4] parameter(1)
  ROOT c = f32[2,4,4] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2
})",
     1e-5, 2e-4},
    {"reversed_window", R"(
HloModule m
ENTRY e {
  x = f32[1,7,9,3] parameter(0)
  w = f32[2,3,3,5] parameter(1)
  ROOT c = f32[1,6,7,5] convolution(x, w), window={size=2x3 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f
})",
     1e-5, 2e-4},
    {"ndhwc_3d", R"(
HloModule m
ENTRY e {
  x = f32[1,5,6,7,4] parameter(0)
  w = f32[2,2,3,4,16] parameter(1)
  ROOT c = f32[1,4,5,5,16] convolution(x, w), window={size=2x2x3}, dim_labels=b012f_012io->b012f
})",
     1e-5, 2e-4},
    {"int8_to_int32", R"(
HloModule m
ENTRY e {
  x = s8[2,6,6,3] parameter(0)
  w = s8[3,3,3,4] parameter(1)
  ROOT c = s32[2,6,6,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
     0, 0},
    {"int8_saturates", R"(
HloModule m
ENTRY e {
  x = s8[1,4,4,16] parameter(0)
  w = s8[3,3,16,2] parameter(1)
  ROOT c = s8[1,2,2,2] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f
})",
     0, 0},
    {"bf16", R"(
HloModule m
ENTRY e {
  x = bf16[2,8,8,4] parameter(0)
  w = bf16[3,3,4,8] parameter(1)
  ROOT c = bf16[2,8,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
     1e-2, 1e-2},
    {"f64", R"(
HloModule m
ENTRY e {
  x = f64[2,3,11] parameter(0)
  w = f64[5,3,3] parameter(1)
  ROOT c = f64[2,5,11] convolution(x, w), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0
})",
     1e-12, 1e-12},
    {"bias_relu_epilogue", R"(
HloModule m
ENTRY e {
  x = f32[2,9,9,6] parameter(0)
  w = f32[3,3,6,24] parameter(1)
  bias = f32[24] parameter(2)
  c = f32[2,9,9,24] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  b = f32[2,9,9,24] broadcast(bias), dimensions={3}
  s = f32[2,9,9,24] add(c, b)
  zero = f32[] constant(0)
  z = f32[2,9,9,24] broadcast(zero), dimensions={}
  ROOT r = f32[2,9,9,24] maximum(s, z)
})",
     1e-5, 2e-4},
};

class ConvolutionLoweringTest : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvolutionLoweringTest, EqualsInterpreter) {
  const ConvCase& c = GetParam();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(c.text));
  // Integers in a small range (s8 products of up to 27 terms stay exact
  // in s32; the saturating case overflows s8 on purpose).
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 5, -4, 4, /*small_ints=*/false);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, c.rtol, c.atol, c.name));
}

INSTANTIATE_TEST_SUITE_P(Forms, ConvolutionLoweringTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ConvCase>& info) {
                           return std::string(info.param.name);
                         });

// f32 convolutions take a register tile: NHWC vectorises the output
// features (3 vectors of 8 with AVX2, 2 of 16 with AVX-512: 32 features
// are narrower than its 64x6 tile) over rows of output positions, NCHW
// the output positions over rows of output features (24 of them, enough
// rows for AVX-512's 32x12 tile); both keep the tile's
// accumulators in a per-tile stage, with the input feature the innermost
// reduction loop.
TEST(ConvolutionScheduleTest, F32FormsAreRegisterTiled) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> nhwc, hlo::ParseAndVerifyModule(kCases[0].text));
  ASSERT_OK_AND_ASSIGN(std::string nest, testing_util::LoopNestOfEntry(*nhwc));
  // The tile's accumulators: columns x rows, the other dims single points.
  const std::string tile_stage =
      "allocate conv_acc_[a-z0-9_$]+\\[float32 \\* (24( \\* 1)* \\* 4|16( \\* 1)* \\* 6|64( \\* 1)* \\* 6|"
      "32( \\* 1)* \\* 12|16( \\* 1)* \\* 24)( \\* 1)*\\]";
  EXPECT_THAT(nest, ::testing::ContainsRegex(tile_stage));
  EXPECT_THAT(nest, ::testing::ContainsRegex("for \\(conv_acc_[a-z0-9_]*\\.s1\\.conv_k_[a-z0-9_]*\\$x, 0, 8\\)"));
  EXPECT_THAT(nest, ::testing::HasSubstr("halide_do_par_for"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> nchw, hlo::ParseAndVerifyModule(kCases[1].text));
  ASSERT_OK_AND_ASSIGN(std::string nchw_nest, testing_util::LoopNestOfEntry(*nchw));
  EXPECT_THAT(nchw_nest, ::testing::ContainsRegex(tile_stage));
  // Its vectors run along the output positions (stride 2 in the input).
  EXPECT_THAT(nchw_nest, ::testing::ContainsRegex("in0\\[ramp\\([^]]*, 2, (8|16)\\)\\]"));
}

}  // namespace
}  // namespace sharc::codegen
