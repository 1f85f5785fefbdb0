// reduce-window and scatter beyond the plain forms, as Halide kernels
// against the interpreter for every dtype: reduce-window whose reducer is a
// whole computation (a non-commutative fold, add-then-max, add-then-clamp)
// or that has several inputs (argmax over windows, ties to the lower
// index), with padding, strides, base and window dilation, ranks 0 to 4,
// sizes that are not a multiple of the vector width and empty dims; and
// variadic scatter (2 and 3 operands, mixed dtypes including pred) with
// duplicate and out-of-bounds indices, batching dims, empty updates, empty
// and rank-0 operands, and windows large enough for the parallel update
// loop; and select-and-scatter (max and min pooling's gradients) with
// overlapping, padded and all-padding windows and an order-dependent
// scatter. Each runs unfused (one kernel per op) and fused.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "codegen/fusion.h"
#include "gtest/gtest.h"
#include "hlo/text/printer.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;
using testing_util::ForType;

// Small values (integers in [-8, 8]) so that ties, duplicate indices and
// out-of-bounds indices all happen.
std::vector<hlo::Literal> SmallArgs(const hlo::Module& module, uint64_t seed) {
  return testing_util::RandomArgs(module, seed, -2, 2, /*small_ints=*/true);
}

// Every op lowers (no interpreter fallback), and the Halide kernels equal
// the interpreter bit for bit, one kernel per op and fused.
void ExpectEqualsInterpreter(const std::string& text, const std::vector<uint64_t>& seeds) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  ASSERT_OK(CheckHalideSupports(*module));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  for (uint64_t seed : seeds) {
    std::vector<hlo::Literal> args = SmallArgs(*module, seed);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal unfused, testing_util::RunWithHalideFactory(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, unfused, 0, 0, "unfused")) << text;
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "fused"))
        << hlo::PrintModule(*fused);
  }
}

constexpr const char* kReduceWindow = R"(
HloModule general_reduce_window
composite { x = T[] parameter(0)  y = T[] parameter(1)  s = T[] OPA(x, y)  ROOT m = T[] maximum(s, y) }
fold { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPS(x, y) }
argmax {
  av = T[] parameter(0)  ai = s32[] parameter(1)  bv = T[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = T[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (T[], s32[]) tuple(v, i)
}
ENTRY main {
  a = T[7,33] parameter(0)
  b = T[2,3,5,4] parameter(1)
  c = T[9] parameter(2)
  s = T[] parameter(3)
  e = T[0,5] parameter(4)
  v0 = T[] parameter(5)
  si = s32[] parameter(6)
  e32 = s32[0,5] parameter(7)
  i0 = s32[] constant(-1)
  ia = s32[7,33] iota(), iota_dimension=1
  ib = s32[2,3,5,4] iota(), iota_dimension=3
  r0 = T[4,21] reduce-window(a, v0), window={size=3x4 stride=2x3 pad=1_1x2_0 lhs_dilate=1x2 rhs_dilate=1x2}, to_apply=composite
  r1 = T[2,3,3,4] reduce-window(b, v0), window={size=1x2x3x2 stride=1x1x2x1 pad=0_0x1_0x1_1x0_1}, to_apply=fold
  r2 = (T[7,17], s32[7,17]) reduce-window(a, ia, v0, i0), window={size=2x5 stride=1x2 pad=0_1x2_2}, to_apply=argmax
  r3 = T[6] reduce-window(c, v0), window={size=4 stride=3 pad=2_2 lhs_dilate=2}, to_apply=fold
  r4 = T[] reduce-window(s, v0), window={}, to_apply=composite
  r5 = (T[], s32[]) reduce-window(s, si, v0, i0), window={}, to_apply=argmax
  r6 = T[0,4] reduce-window(e, v0), window={size=1x2}, to_apply=fold
  r7 = (T[1,2,3,4], s32[1,2,3,4]) reduce-window(b, ib, v0, i0), window={size=2x1x2x3 stride=1x2x1x1 pad=0_0x0_1x0_0x1_1 rhs_dilate=1x1x2x1}, to_apply=argmax
  r8 = T[2,4] reduce-window(e, v0), window={size=1x2 pad=1_1x0_0}, to_apply=fold
  r9 = (T[2,4], s32[2,4]) reduce-window(e, e32, v0, i0), window={size=1x2 pad=1_1x0_0}, to_apply=argmax
  r2v = T[7,17] get-tuple-element(r2), index=0
  r2i = s32[7,17] get-tuple-element(r2), index=1
  r5v = T[] get-tuple-element(r5), index=0
  r5i = s32[] get-tuple-element(r5), index=1
  r7v = T[1,2,3,4] get-tuple-element(r7), index=0
  r7i = s32[1,2,3,4] get-tuple-element(r7), index=1
  r9i = s32[2,4] get-tuple-element(r9), index=1
  ROOT out = (T[4,21], T[2,3,3,4], T[7,17], s32[7,17], T[6], T[], T[], s32[], T[0,4], T[1,2,3,4], s32[1,2,3,4], T[2,4], s32[2,4])
    tuple(r0, r1, r2v, r2i, r3, r4, r5v, r5i, r6, r7v, r7i, r8, r9i)
}
)";

class GeneralReduceWindowTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(GeneralReduceWindowTest, EqualsInterpreterUnfusedAndFused) {
  ExpectEqualsInterpreter(ForType(kReduceWindow, GetParam()), {51, 52});
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GeneralReduceWindowTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// add-then-clamp to [-2, 2] (a saturating window sum: not associative, so
// the fold order shows), over windows long enough for vectorised and
// parallel folds.
TEST(GeneralReduceWindowTest, AddThenClampWindowSums) {
  for (const char* type : {"f32", "s32", "f16", "bf16"}) {
    const std::string text = absl::StrReplaceAll(R"(
HloModule add_clamp
add_clamp {
  x = T[] parameter(0)  y = T[] parameter(1)  s = T[] add(x, y)
  lo = T[] constant(-2)  hi = T[] constant(2)
  ROOT c = T[] clamp(lo, s, hi)
}
ENTRY main {
  a = T[19,131] parameter(0)
  z = T[] constant(0)
  r0 = T[19,131] reduce-window(a, z), window={size=3x7 pad=1_1x3_3}, to_apply=add_clamp
  r1 = T[10,43] reduce-window(a, z), window={size=2x3 stride=2x3 pad=1_0x1_1 rhs_dilate=1x2}, to_apply=add_clamp
  ROOT out = (T[19,131], T[10,43]) tuple(r0, r1)
}
)",
                                                 {{"T[", std::string(type) + "["}});
    SCOPED_TRACE(type);
    ExpectEqualsInterpreter(text, {61});
  }
}

constexpr const char* kScatter = R"(
HloModule variadic_scatter
argmax {
  av = T[] parameter(0)  ai = s32[] parameter(1)  bv = T[] parameter(2)  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = T[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (T[], s32[]) tuple(v, i)
}
overwrite {
  av = T[] parameter(0)  ai = s32[] parameter(1)  bv = T[] parameter(2)  bi = s32[] parameter(3)
  ROOT r = (T[], s32[]) tuple(bv, bi)
}
cross {
  x0 = T[] parameter(0)  x1 = T[] parameter(1)  y0 = T[] parameter(2)  y1 = T[] parameter(3)
  d = T[] OPS(x0, y1)
  s = T[] OPA(x1, y0)
  ROOT r = (T[], T[]) tuple(d, s)
}
triple {
  v = T[] parameter(0)  i = s32[] parameter(1)  f = pred[] parameter(2)
  w = T[] parameter(3)  j = s32[] parameter(4)  g = pred[] parameter(5)
  nv = T[] select(g, w, v)
  ni = s32[] add(i, j)
  nf = pred[] or(f, g)
  ROOT r = (T[], s32[], pred[]) tuple(nv, ni, nf)
}
ENTRY main {
  a = T[5,7,3] parameter(0)
  ai = s32[5,7,3] parameter(1)
  i = s32[4,2] parameter(2)
  u = T[4,2,3] parameter(3)
  ui = s32[4,2,3] parameter(4)
  j = s64[6] parameter(5)
  w = T[6,7,3] parameter(6)
  wi = s32[6,7,3] parameter(7)
  k = s32[5,4,1] parameter(8)
  x = T[5,4,3] parameter(9)
  y = T[5,4,3] parameter(10)
  c = T[9] parameter(11)
  ci = s32[9] parameter(12)
  cf = pred[9] parameter(13)
  h = s32[11,1] parameter(14)
  hv = T[11] parameter(15)
  hi = s32[11] parameter(16)
  hf = pred[11] parameter(17)
  e = s32[0,2] parameter(18)
  eu = T[0,2,3] parameter(19)
  eui = s32[0,2,3] parameter(20)
  z = T[4,0] parameter(21)
  zi = s32[4,0] parameter(22)
  zx = s32[3,1] parameter(23)
  zu = T[3,0] parameter(24)
  zui = s32[3,0] parameter(25)
  p = T[] parameter(26)
  pi = s32[] parameter(27)
  px = s32[5,0] parameter(28)
  pu = T[5] parameter(29)
  pui = s32[5] parameter(30)
  s0 = (T[5,7,3], s32[5,7,3]) scatter(a, ai, i, u, ui), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=argmax
  s1 = (T[5,7,3], s32[5,7,3]) scatter(a, ai, j, w, wi), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=overwrite
  s2 = (T[5,7,3], T[5,7,3]) scatter(a, a, k, x, y), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=cross
  s3 = (T[9], s32[9], pred[9]) scatter(c, ci, cf, h, hv, hi, hf), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=triple
  s4 = (T[5,7,3], s32[5,7,3]) scatter(a, ai, e, eu, eui), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=argmax
  s5 = (T[4,0], s32[4,0]) scatter(z, zi, zx, zu, zui), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=overwrite
  s6 = (T[], s32[]) scatter(p, pi, px, pu, pui), update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=1, to_apply=argmax
  s7 = (T[], s32[]) scatter(p, pi, px, pu, pui), update_window_dims={}, inserted_window_dims={}, scatter_dims_to_operand_dims={}, index_vector_dim=1, to_apply=overwrite
  s0v = T[5,7,3] get-tuple-element(s0), index=0
  s0i = s32[5,7,3] get-tuple-element(s0), index=1
  s1v = T[5,7,3] get-tuple-element(s1), index=0
  s1i = s32[5,7,3] get-tuple-element(s1), index=1
  s2a = T[5,7,3] get-tuple-element(s2), index=0
  s2b = T[5,7,3] get-tuple-element(s2), index=1
  s3v = T[9] get-tuple-element(s3), index=0
  s3i = s32[9] get-tuple-element(s3), index=1
  s3f = pred[9] get-tuple-element(s3), index=2
  s4i = s32[5,7,3] get-tuple-element(s4), index=1
  s5v = T[4,0] get-tuple-element(s5), index=0
  s6v = T[] get-tuple-element(s6), index=0
  s6i = s32[] get-tuple-element(s6), index=1
  s7i = s32[] get-tuple-element(s7), index=1
  ROOT out = (T[5,7,3], s32[5,7,3], T[5,7,3], s32[5,7,3], T[5,7,3], T[5,7,3], T[9], s32[9], pred[9], s32[5,7,3], T[4,0], T[], s32[], s32[])
    tuple(s0v, s0i, s1v, s1i, s2a, s2b, s3v, s3i, s3f, s4i, s5v, s6v, s6i, s7i)
}
)";

constexpr const char* kSelectAndScatter = R"(
HloModule select_and_scatter
ge { x = T[] parameter(0)  y = T[] parameter(1)  ROOT c = pred[] compare(x, y), direction=GE }
le { x = T[] parameter(0)  y = T[] parameter(1)  ROOT c = pred[] compare(x, y), direction=LE }
plus { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPA(x, y) }
fold { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPS(x, y) }
ENTRY main {
  a = T[6,9] parameter(0)
  s0 = T[3,3] parameter(1)
  b = T[2,7,5,3] parameter(2)
  s1 = T[2,4,3,3] parameter(3)
  c = T[10] parameter(4)
  s2 = T[5] parameter(5)
  s3 = T[7] parameter(6)
  z = T[] parameter(7)
  sz = T[] parameter(8)
  e = T[0,4] parameter(9)
  se = T[0,2] parameter(10)
  v0 = T[] parameter(11)
  r0 = T[6,9] select-and-scatter(a, s0, v0), window={size=2x3 stride=2x3}, select=ge, scatter=plus
  r1 = T[2,7,5,3] select-and-scatter(b, s1, v0), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=le, scatter=fold
  r2 = T[10] select-and-scatter(c, s2, v0), window={size=4 stride=2 pad=1_1}, select=ge, scatter=fold
  r3 = T[10] select-and-scatter(c, s3, v0), window={size=3 stride=2 pad=3_3}, select=le, scatter=plus
  r4 = T[] select-and-scatter(z, sz, v0), window={}, select=ge, scatter=fold
  r5 = T[0,4] select-and-scatter(e, se, v0), window={size=1x2 stride=1x2}, select=ge, scatter=plus
  ROOT out = (T[6,9], T[2,7,5,3], T[10], T[10], T[], T[0,4]) tuple(r0, r1, r2, r3, r4, r5)
}
)";

class SelectAndScatterTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(SelectAndScatterTest, EqualsInterpreterUnfusedAndFused) {
  ExpectEqualsInterpreter(ForType(kSelectAndScatter, GetParam()), {81, 82});
}

INSTANTIATE_TEST_SUITE_P(AllTypes, SelectAndScatterTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// A max-pool's gradient at training sizes: the selection and the gather
// run vectorised and in parallel.
TEST(SelectAndScatterTest, PoolingGradientAtTrainingSizeEqualsInterpreter) {
  ExpectEqualsInterpreter(R"(
HloModule max_pool_grad
ge { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT c = pred[] compare(x, y), direction=GE }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  x = f32[4,32,32,16] parameter(0)
  ct = f32[4,16,16,16] parameter(1)
  zero = f32[] constant(0)
  ROOT g = f32[4,32,32,16] select-and-scatter(x, ct, zero), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
}
)",
                          {91});
}

class VariadicScatterTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(VariadicScatterTest, EqualsInterpreterUnfusedAndFused) {
  ExpectEqualsInterpreter(ForType(kScatter, GetParam()), {71, 72});
}

INSTANTIATE_TEST_SUITE_P(AllTypes, VariadicScatterTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// Windows of 96x100 elements: the update loop runs each window in parallel
// (one scatter index after the other). Duplicate indices (2 three times),
// out-of-bounds ones, an overwriting combiner (the last duplicate wins) and
// an accumulating one, for one and two operands; a window dim before the
// scatter dim keeps the serial loop.
TEST(ScatterParallelWindowTest, LargeWindowsEqualInterpreter) {
  constexpr const char* kText = R"(
HloModule big_scatter
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
last { x = f32[] parameter(0)  ROOT y = f32[] parameter(1) }
pair {
  av = f32[] parameter(0)  ai = s32[] parameter(1)  bv = f32[] parameter(2)  bi = s32[] parameter(3)
  s = f32[] add(av, bv)
  ROOT r = (f32[], s32[]) tuple(s, bi)
}
ENTRY main {
  a = f32[6,96,100] parameter(0)
  ai = s32[6,96,100] parameter(1)
  i = s32[7,1] parameter(2)
  u = f32[7,96,100] parameter(3)
  ui = s32[7,96,100] parameter(4)
  ut = f32[96,7,100] parameter(5)
  s0 = f32[6,96,100] scatter(a, i, u), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  s1 = f32[6,96,100] scatter(a, i, u), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=last
  s2 = (f32[6,96,100], s32[6,96,100]) scatter(a, ai, i, u, ui), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
  s3 = f32[6,96,100] scatter(a, i, ut), update_window_dims={0,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=last
  s2v = f32[6,96,100] get-tuple-element(s2), index=0
  s2i = s32[6,96,100] get-tuple-element(s2), index=1
  ROOT out = (f32[6,96,100], f32[6,96,100], f32[6,96,100], s32[6,96,100], f32[6,96,100]) tuple(s0, s1, s2v, s2i, s3)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK(CheckHalideSupports(*module));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 81, -3, 3, true);
  const int64_t starts[] = {2, 0, 2, 7, -1, 5, 2};
  for (int64_t k = 0; k < 7; ++k) args[2].SetFromInt64(k, starts[k]);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "big scatter"));
}

// Reducers and combiners that reach other computations through `call`
// (a callee may itself call, or return a tuple read by get-tuple-element)
// lower like inline ones: reduce, reduce-window and a variadic scatter.
TEST(GeneralWindowScatterTest, ReducersThatCallOtherComputations) {
  constexpr const char* kText = R"(
HloModule calls
sub { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] subtract(x, y) }
halve { x = f32[] parameter(0)  h = f32[] constant(0.5)  ROOT r = f32[] multiply(x, h) }
calls { x = f32[] parameter(0)  y = f32[] parameter(1)  d = f32[] call(x, y), to_apply=sub
        ROOT c = f32[] call(d), to_apply=halve }
both { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
       x = f32[] maximum(a, c)  y = s32[] add(b, d)  ROOT t = (f32[], s32[]) tuple(x, y) }
pair { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
       t = (f32[], s32[]) call(a, b, c, d), to_apply=both
       x = f32[] get-tuple-element(t), index=0  y = s32[] get-tuple-element(t), index=1
       ROOT r = (f32[], s32[]) tuple(x, y) }
ENTRY main {
  a = f32[5,3] parameter(0)
  b = s32[5,3] parameter(1)
  i = s32[2,1] parameter(2)
  u = f32[2,3] parameter(3)
  v = s32[2,3] parameter(4)
  z = f32[] constant(0)
  zi = s32[] constant(0)
  w = f32[4,3] reduce-window(a, z), window={size=2x1}, to_apply=calls
  r = f32[3] reduce(a, z), dimensions={0}, to_apply=calls
  p = (f32[3], s32[3]) reduce(a, b, z, zi), dimensions={0}, to_apply=pair
  pv = f32[3] get-tuple-element(p), index=0
  pi = s32[3] get-tuple-element(p), index=1
  s = (f32[5,3], s32[5,3]) scatter(a, b, i, u, v), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
  sv = f32[5,3] get-tuple-element(s), index=0
  si = s32[5,3] get-tuple-element(s), index=1
  ROOT out = (f32[4,3], f32[3], f32[3], s32[3], f32[5,3], s32[5,3]) tuple(w, r, pv, pi, sv, si)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK(CheckHalideSupports(*module));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 83, -3, 3, true);
  args[2].SetFromInt64(0, 3);
  args[2].SetFromInt64(1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "calling reducers"));
}

// A callee that takes a tuple (a call result passed on whole) is refused
// with a reason rather than lowered wrongly.
TEST(GeneralWindowScatterTest, CallsWithTupleArgumentsAreRefused) {
  constexpr const char* kText = R"(
HloModule tuple_arg
first { t = (f32[], f32[]) parameter(0)  ROOT x = f32[] get-tuple-element(t), index=0 }
both { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT t = (f32[], f32[]) tuple(x, y) }
calls { x = f32[] parameter(0)  y = f32[] parameter(1)  t = (f32[], f32[]) call(x, y), to_apply=both
        ROOT c = f32[] call(t), to_apply=first }
ENTRY main {
  a = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(a, z), window={size=2}, to_apply=calls
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  absl::Status s = CheckHalideSupports(*module);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("with a non-scalar"), std::string::npos) << s;
}

// What still has no Halide lowering: a reducer that branches (conditional)
// or loops. The error names the op and what the reducer uses.
TEST(GeneralWindowScatterTest, BranchingReducersAreRefusedWithAReason) {
  const std::string text = absl::StrCat("HloModule refused\n", testing_util::kBranchingReducer, R"(
ENTRY main {
  a = f32[5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce-window(a, z), window={size=2}, to_apply=picks
}
)");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  absl::Status s = CheckHalideSupports(*module);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("uses conditional"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("reduce-window("), std::string::npos) << s;
}

}  // namespace
}  // namespace sharc::codegen
