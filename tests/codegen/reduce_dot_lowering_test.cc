// reduce, reduce-window and dot against the interpreter. Reductions run each
// output's fold in the interpreter's order, so they match bit for bit, except
// f32/f64 sums over rows of kVectorizedRow or more (r0's 67), which are
// summed as vector partials, as XLA does, and agree to rounding; dots
// accumulate in f32 (the interpreter in double) and are compared with a
// tolerance scaled by the contraction length.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "codegen/host_caches.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;

constexpr const char* kReduceModule = R"(
HloModule reduce_T
sum { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPA(x, y) }
max { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] maximum(x, y) }
min { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] minimum(y, x) }
ENTRY main {
  a = T[3,5,67] parameter(0)
  init = T[] parameter(1)
  e = T[4,0] parameter(2)
  r0 = T[3,5] reduce(a, init), dimensions={2}, to_apply=sum
  r1 = T[5,67] reduce(a, init), dimensions={0}, to_apply=max
  r2 = T[] reduce(a, init), dimensions={0,1,2}, to_apply=sum
  r3 = T[3,67] reduce(a, init), dimensions={1}, to_apply=min
  r4 = T[4] reduce(e, init), dimensions={1}, to_apply=sum
  r5 = T[3,5,67] reduce(a, init), dimensions={}, to_apply=sum
  r6 = T[2,5,34] reduce-window(a, init), window={size=2x1x3 stride=1x1x2 pad=0_0x0_0x1_1}, to_apply=max
  r7 = T[3,10,67] reduce-window(a, init), window={size=1x2x1 pad=0_0x1_1x0_0 lhs_dilate=1x2x1}, to_apply=sum
  ROOT out = (T[3,5], T[5,67], T[], T[3,67], T[4], T[3,5,67], T[2,5,34], T[3,10,67])
    tuple(r0, r1, r2, r3, r4, r5, r6, r7)
}
)";

class ReduceLoweringTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(ReduceLoweringTest, EqualsInterpreter) {
  const PrimitiveType t = GetParam();
  // pred has no add: its "sum" is or.
  const std::string text = absl::StrReplaceAll(
      kReduceModule, {{"T[", hlo::PrimitiveTypeName(t) + "["},
                      {"OPA", t == PrimitiveType::kPred ? "or" : "add"},
                      {"reduce_T", "reduce"}});
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 11);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // Order-independent folds (integers, max, min) must match exactly.
  const double rtol = t == PrimitiveType::kF32 ? 1e-5 : t == PrimitiveType::kF64 ? 1e-13 : 0;
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, rtol, rtol, "reductions")) << text;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReduceLoweringTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// max(acc, select(c, x, INT64_MIN)) came out as max(acc, 1): Halide's
// simplifier mishandled the INT64_MIN immediate, so a reduce or a scatter
// under maximum of such a select (a padded argmax, a split scatter's padding
// rows) was wrong. INT64_MIN is now loaded from a one-element buffer
// (codegen/source_lowerings.cc).
TEST(ReduceLoweringTest, Int64MinInASelectUnderMax) {
  constexpr const char* kText = R"(
HloModule int64_min
comb { a = s64[] parameter(0)  b = s64[] parameter(1)  ROOT c = s64[] maximum(a, b) }
ENTRY main {
  u = s64[4,3] parameter(0)
  lowest = s64[] constant(-9223372036854775808)
  lowests = s64[4,3] broadcast(lowest), dimensions={}
  rows = s32[4,3] iota(), iota_dimension=0
  three = s32[] constant(3)
  threes = s32[4,3] broadcast(three), dimensions={}
  kept = pred[4,3] compare(rows, threes), direction=LT
  masked = s64[4,3] select(kept, u, lowests)
  init = s64[] constant(-5)
  ROOT r = s64[3] reduce(masked, init), dimensions={0}, to_apply=comb
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 54);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "reduce")) << kText;
}

constexpr const char* kDotModule = R"(
HloModule dot_T
ENTRY main {
  a = T[70,67] parameter(0)
  b = T[67,130] parameter(1)
  bt = T[130,67] parameter(2)
  x = T[3,5,7] parameter(3)
  y = T[3,7,9] parameter(4)
  v = T[67] parameter(5)
  e = T[4,0] parameter(6)
  f = T[0,5] parameter(7)
  r0 = T[70,130] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r1 = T[70,130] dot(a, bt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  r2 = T[3,5,9] dot(x, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  r3 = T[] dot(v, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  r4 = T[70] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r5 = T[4,5] dot(e, f), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r6 = T[5,3,7,7,3] dot(x, x), lhs_contracting_dims={}, rhs_contracting_dims={}, lhs_batch_dims={}, rhs_batch_dims={}
  ROOT out = (T[70,130], T[70,130], T[3,5,9], T[], T[70], T[4,5], T[5,3,7,7,3])
    tuple(r0, r1, r2, r3, r4, r5, r6)
}
)";

class DotLoweringTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(DotLoweringTest, EqualsInterpreter) {
  const PrimitiveType t = GetParam();
  std::string text = absl::StrReplaceAll(
      kDotModule, {{"T[", hlo::PrimitiveTypeName(t) + "["}, {"dot_T", "dot"}});
  // r6 is an outer product: result dims are lhs free then rhs free dims.
  text = absl::StrReplaceAll(text, {{"[5,3,7,7,3]", "[3,5,7,3,5,7]"}});
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 13, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // 67-term sums of products in [-1, 1]: f32 accumulation differs from the
  // interpreter's double by a few ulps of the sum's magnitude (<= 67).
  double tol = t == PrimitiveType::kF32 ? 2e-5 : t == PrimitiveType::kF64 ? 1e-12
             : t == PrimitiveType::kBF16 ? 1e-2 : t == PrimitiveType::kF16 ? 2e-3 : 0;
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, tol, tol, "dots")) << text;
}

std::vector<PrimitiveType> NumericTypes() {
  std::vector<PrimitiveType> out;
  for (PrimitiveType t : AllTypes()) {
    if (t != PrimitiveType::kPred) out.push_back(t);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(NumericTypes, DotLoweringTest, ::testing::ValuesIn(NumericTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// The f32 schedule's register tiles (codegen/dot_lowering.cc) at shapes
// that are not multiples of a tile (AVX2: 4 rows of 24 columns, three 8-lane
// vectors; AVX-512: 6 rows of 64), with the rhs packed
// (k * n * 4 >= 256 KiB), and with few column panels, where tasks split the
// rows into chunks: enough for two tasks a core where the lhs is at most
// 4 MiB, 8 tasks above that (dot_lowering.cc's MinGemmTasks), so how many
// chunks the small shapes take depends on the host's cores (the counts
// below are a 2-core host's). `wide` is packed, with column tails, in 1
// (AVX2: 5 panels) or 2 chunks (AVX-512: 2 panels);
// `chunked` and `both` are tiled only with AVX2's 24 columns; `narrow` (20
// columns) is below that and takes AVX2's other tile, 6 rows of 16, as does
// `packed16` (32 columns, which 16 divide) with its rhs packed; `short`
// (5 rows) has two 4-row tiles that overlap, and an odd contraction (71
// steps: the k loop stays one step; the other tiled dots take 2 at a time).
// `two_k` contracts two dims (7 x 5, the innermost odd: one step).
// `blocked` (4.06 MiB of lhs, over the 4 MiB threshold) runs in two serial
// blocks of rows of unequal size with AVX2 (9 panels), each block's lhs
// packed into 4-row tiles first; with AVX-512 it has 4 panels and is
// chunked instead. `blocked_t` reads its lhs transposed (contracting dim
// first) into the packed blocks, with an odd contraction (1031 steps) and
// rows (1035) that leave the last packed tile part-filled. `packed_t`
// (1.06 MiB of transposed lhs, 2 panels: chunked, not blocked) is packed
// whole, at the root.
TEST(DotLoweringTest, RegisterTiledF32EqualsInterpreter) {
  const std::string text = R"(
HloModule tiled
ENTRY main {
  a = f32[50,300] parameter(0)
  b = f32[300,1000] parameter(1)
  c = f32[200,300] parameter(2)
  d = f32[300,40] parameter(3)
  e = f32[31,6600] parameter(4)
  f = f32[6600,40] parameter(5)
  g = f32[31,2700] parameter(6)
  h = f32[2700,100] parameter(7)
  i = f32[9,50] parameter(8)
  j = f32[50,20] parameter(9)
  narrow = f32[9,20] dot(i, j), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = f32[12,2100] parameter(10)
  l = f32[2100,32] parameter(11)
  packed16 = f32[12,32] dot(k, l), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  o = f32[5,71] parameter(12)
  p = f32[71,30] parameter(13)
  short = f32[5,30] dot(o, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[1034,1030] parameter(14)
  r = f32[1030,200] parameter(15)
  blocked = f32[1034,200] dot(q, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  qt = f32[1031,1035] parameter(18)
  rt = f32[1031,200] parameter(19)
  blocked_t = f32[1035,200] dot(qt, rt), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ut = f32[520,510] parameter(20)
  vt = f32[520,40] parameter(21)
  packed_t = f32[510,40] dot(ut, vt), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  packed = f32[50,1000] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  chunked = f32[200,40] dot(c, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  both = f32[31,40] dot(e, f), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wide = f32[31,100] dot(g, h), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  w = f32[31,7,5] parameter(16)
  z = f32[7,5,40] parameter(17)
  two_k = f32[31,40] dot(w, z), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
  ROOT out = (f32[50,1000], f32[200,40], f32[31,40], f32[31,100], f32[9,20], f32[12,32], f32[5,30],
             f32[1034,200], f32[31,40], f32[1035,200], f32[510,40])
      tuple(packed, chunked, both, wide, narrow, packed16, short, blocked, two_k, blocked_t, packed_t)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 19, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // Up to 6600-term sums (magnitude ~30): f32 accumulation is within 1e-3.
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-4, 1e-3, "tiled f32 dots"));
}

// A GEMM whose packed rhs fits in half the L2 runs row tiles outside the
// column panels (dot_lowering.cc's RowTileOrder): the rhs is packed once,
// by a parallel loop over panels, and each parallel task is a row tile
// over every panel. `nt` reads its rhs transposed, with 100 rows (the last
// row tile shifts) and an epilogue reading a second full-size input; `tn`
// reads a 1 MiB lhs transposed (packed whole, at the root); `nn` is the
// plain 256 KiB case. Which of them take the order depends on the host's
// L2 and tile (AVX-512: 64 columns, which divide them all; AVX2's 24 divide
// none), so the loop nest's expectation is computed from both.
TEST(DotLoweringTest, GemmsWhoseRhsFitsTheL2RunRowTilesOutsidePanels) {
  const std::string text = R"(
HloModule row_tiles
ENTRY main {
  a = f32[100,256] parameter(0)
  b = f32[1024,256] parameter(1)
  h = f32[100,1024] parameter(2)
  d = f32[100,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  nt = f32[100,1024] add(d, h)
  at = f32[1024,256] parameter(3)
  bt = f32[1024,256] parameter(4)
  tn = f32[256,256] dot(at, bt), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  c = f32[70,256] parameter(5)
  e = f32[256,256] parameter(6)
  nn = f32[70,256] dot(c, e), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = (f32[100,1024], f32[256,256], f32[70,256]) tuple(nt, tn, nn)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 29, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-4, 1e-3, "row-tile-order dots"));

  // The 1 MiB transposed rhs alone, as a loop nest.
  const std::string gemm = R"(
HloModule nt
ENTRY main {
  a = f32[100,256] parameter(0)
  b = f32[1024,256] parameter(1)
  ROOT d = f32[100,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> nt, hlo::ParseAndVerifyModule(gemm));
  ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*nt));
  const bool avx512 = nest.find("avx512") != std::string::npos;
  const bool row_tiles = avx512 && codegen::HostCacheSizes().l2_bytes >= (int64_t{2} << 20);
  if (row_tiles) {
    // 16 panels of 64 columns x 256 k, packed in parallel by panel; 17 row
    // tiles of 6 (the last shifted) in parallel, each over the 16 panels.
    EXPECT_THAT(nest, ::testing::ContainsRegex(
                          "allocate dot_packed_rhs_[a-z0-9_$]+\\[float32 \\* 64 \\* 256 \\* 16\\]"));
    EXPECT_THAT(nest, ::testing::ContainsRegex("halide_do_par_for\\([^\n]*ppanel, 0, 16,"));
    EXPECT_THAT(nest, ::testing::ContainsRegex("halide_do_par_for\\([^\n]*out0[^\n]*, 0, 17,"));
  } else {
    EXPECT_THAT(nest, ::testing::Not(::testing::HasSubstr("ppanel")));
  }
}

// Attention's batched dots take the register tile in each batch, the
// batches one parallel loop: q k^T (transposed rhs, packed per batch, with a
// scaling epilogue), p v (rhs in place), and the gradients' transposed lhs;
// shapes that leave partial tiles on both dims.
TEST(DotLoweringTest, BatchedGemmsEqualInterpreter) {
  const std::string text = R"(
HloModule batched
ENTRY main {
  q = f32[2,3,37,20] parameter(0)
  k = f32[2,3,29,20] parameter(1)
  v = f32[2,3,29,26] parameter(2)
  p = f32[2,3,37,29] parameter(3)
  s = f32[2,3,37,29] dot(q, k), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
      rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  c = f32[] constant(0.25)
  cb = f32[2,3,37,29] broadcast(c), dimensions={}
  scaled = f32[2,3,37,29] multiply(s, cb)
  pv = f32[2,3,37,26] dot(p, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
       rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  pt = f32[2,3,29,20] dot(p, q), lhs_batch_dims={0,1}, lhs_contracting_dims={2},
       rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  ROOT out = (f32[2,3,37,29], f32[2,3,37,26], f32[2,3,29,20]) tuple(scaled, pv, pt)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 23, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "batched f32 dots"));
}

// Heads of 32 and 16 values are narrower than AVX-512's 64x6 tile: they take
// 32x12 and 16x24 tiles there (AVX2's 16x6 everywhere), still one parallel
// loop over the batches. 50 rows leave a partial tile of each height.
TEST(DotLoweringTest, NarrowHeadsTakeNarrowTilesAndEqualInterpreter) {
  const std::string text = R"(
HloModule heads
ENTRY main {
  p = f32[2,3,50,40] parameter(0)
  v32 = f32[2,3,40,32] parameter(1)
  v16 = f32[2,3,40,16] parameter(2)
  pv32 = f32[2,3,50,32] dot(p, v32), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
         rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  pv16 = f32[2,3,50,16] dot(p, v16), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
         rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  g = f32[2,3,50,40] parameter(3)
  q = f32[2,3,50,32] parameter(4)
  gq = f32[2,3,40,32] dot(g, q), lhs_batch_dims={0,1}, lhs_contracting_dims={2},
       rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  ROOT out = (f32[2,3,50,32], f32[2,3,50,16], f32[2,3,40,32]) tuple(pv32, pv16, gq)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 29, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "narrow batched dots"));

  for (const char* n : {"32", "16"}) {
    const std::string one = absl::StrReplaceAll(R"(
HloModule head
ENTRY main {
  p = f32[4,8,128,128] parameter(0)
  v = f32[4,8,128,$N] parameter(1)
  ROOT o = f32[4,8,128,$N] dot(p, v), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
           rhs_batch_dims={0,1}, rhs_contracting_dims={2}
}
)", {{"$N", n}});
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> head, hlo::ParseAndVerifyModule(one));
    ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*head));
    // The batched schedule (one parallel loop over the 32 fused batches),
    // not the untiled one, which is parallel over rows.
    EXPECT_THAT(nest, ::testing::ContainsRegex("halide_do_par_for\\([^,]*batch3, 0, 32,")) << n;
    // With AVX-512, the narrow tile of the head's width.
    if (nest.find("avx512") != std::string::npos) {
      EXPECT_THAT(nest, ::testing::ContainsRegex(std::string("allocate dot_acc_[a-z0-9_$]+\\[float32 \\* ") +
                                                 (std::string(n) == "32" ? "32 \\* 12" : "16 \\* 24") + "( \\* 1)*\\]"))
          << n;
    }
  }
}

TEST(DotLoweringTest, BatchedGemmPacksATransposedRhsPerBatchAndRunsBatchesInParallel) {
  const std::string text = R"(
HloModule scores
ENTRY main {
  q = f32[4,8,128,32] parameter(0)
  k = f32[4,8,128,32] parameter(1)
  ROOT s = f32[4,8,128,128] dot(q, k), lhs_batch_dims={0,1}, lhs_contracting_dims={3},
           rhs_batch_dims={0,1}, rhs_contracting_dims={3}
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*module));
  // One parallel loop, over the fused batch dims, with the rhs packed inside it.
  // (Halide may suffix the loop's name to keep it unique in the process.)
  EXPECT_THAT(nest, ::testing::ContainsRegex("halide_do_par_for\\([^,]*batch3[_0-9]*, 0, 32,"));
  EXPECT_THAT(nest, ::testing::HasSubstr("produce dot_packed_rhs"));
  EXPECT_THAT(nest, ::testing::ContainsRegex(
                        "allocate dot_packed_rhs_[a-z0-9_$]+\\[float32 \\* 128 \\* 32 \\*"));
}

// The rhs panel is packed from 256 KiB of rhs on; below that its rows are
// read in place. Both loop nests have a parallel loop of native vectors. With
// AVX2 the 256 GEMM takes 24x4 tiles and the 128 one 16x6, which divide it;
// with AVX-512 both take 64x6. The loop nest names its target.
TEST(DotLoweringTest, GemmLoopNestsPackFitTheirTilesAndBlockLargeLhs) {
  // [m,k]x[k,n], or with the lhs transposed ([k,m], contracting dim 0).
  auto loop_nest_of_gemm = [](int m, int k, int n,
                              bool transposed = false) -> absl::StatusOr<std::string> {
    const std::string text = absl::StrReplaceAll(R"(
HloModule gemm
ENTRY main {
  a = f32[$A] parameter(0)
  b = f32[$K,$N] parameter(1)
  ROOT d = f32[$M,$N] dot(a, b), lhs_contracting_dims={$C}, rhs_contracting_dims={0}
}
)", {{"$A", transposed ? absl::StrCat(k, ",", m) : absl::StrCat(m, ",", k)},
     {"$C", transposed ? "0" : "1"},
     {"$M", absl::StrCat(m)}, {"$K", absl::StrCat(k)}, {"$N", absl::StrCat(n)}});
    absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
    if (!module.ok()) return module.status();
    return testing_util::LoopNestOfEntry(**module);
  };
  auto loop_nest_of_square_gemm = [&](int n) { return loop_nest_of_gemm(n, n, n); };
  ASSERT_OK_AND_ASSIGN(const std::string small, loop_nest_of_square_gemm(128));
  ASSERT_OK_AND_ASSIGN(const std::string large, loop_nest_of_square_gemm(256));
  ASSERT_THAT(large, ::testing::ContainsRegex("target=x86-64-[a-z0-9_-]*avx2"));
  const bool avx512 = large.find("avx512") != std::string::npos;
  for (const std::string& nest : {small, large}) {
    EXPECT_THAT(nest, ::testing::HasSubstr("produce dot_acc"));
    EXPECT_THAT(nest, ::testing::HasSubstr("_par_for_"));
    EXPECT_THAT(nest, ::testing::HasSubstr(avx512 ? "float32x16" : "float32x8"));
  }
  EXPECT_THAT(small, ::testing::Not(::testing::HasSubstr("produce dot_packed_rhs")));
  EXPECT_THAT(large, ::testing::HasSubstr("produce dot_packed_rhs"));
  // Halide may suffix a name with $N when it has seen it before in the
  // process, so the count depends on which tests ran first.
  const std::string tile = "allocate dot_acc_[a-z0-9_$]+\\[float32 \\* ";
  EXPECT_THAT(small, ::testing::ContainsRegex(tile + (avx512 ? "64 \\* 6" : "16 \\* 6") + "\\]"));
  EXPECT_THAT(large, ::testing::ContainsRegex(tile + (avx512 ? "64 \\* 6" : "24 \\* 4") + "\\]"));
  // An lhs over 4 MiB is taken in serial blocks of rows of at most 8 MiB,
  // at least two, each packed into the tile's row order by a parallel loop
  // and then gone through by a parallel loop over the column panels.
  ASSERT_OK_AND_ASSIGN(const std::string four_mib, loop_nest_of_square_gemm(1024));
  ASSERT_OK_AND_ASSIGN(const std::string sixteen_mib, loop_nest_of_square_gemm(2048));
  EXPECT_THAT(four_mib, ::testing::Not(::testing::HasSubstr("row_block")));
  EXPECT_THAT(four_mib, ::testing::Not(::testing::HasSubstr("dot_packed_lhs")));
  // Where the tile's rows do not divide the block's (AVX-512's 6 into 1024),
  // the last block's last tile is shifted and Halide peels the two blocks
  // apart: two copies of the block instead of the loop.
  const std::string packed_block =
      std::string("allocate dot_packed_lhs_[a-z0-9_$]+\\[float32 \\* ") + (avx512 ? "6" : "4") +
      " \\* 2048 \\* [0-9]+\\]\n"
      " *produce dot_packed_lhs_[a-z0-9_$]+ \\{\n"
      "([^\n]*\n){1,4} *let [^ ]+ = halide_do_par_for\\([^,]+par_for_dot_packed_lhs"
      "(.*\n)+ *let [^ ]+ = halide_do_par_for\\([^,]+par_for_out0";
  EXPECT_THAT(sixteen_mib,
              ::testing::AnyOf(
                  ::testing::ContainsRegex("for \\([^,]+row_block, 0, 2\\) \\{\n *" + packed_block),
                  ::testing::ContainsRegex(packed_block + "(.*\n)+ *" + packed_block)));
  // A long contraction leaves few rows in a block (44000 steps: 24 rows over
  // 4 MiB, AVX2's 3 row tiles a block, AVX-512's 2): the block's packed lhs
  // holds those tiles only. A parallel split of 8 shifted inwards would pack
  // 8 a block, the first block's starting before row 0.
  ASSERT_OK_AND_ASSIGN(const std::string thin_nest, loop_nest_of_gemm(24, 44000, 512));
  EXPECT_THAT(thin_nest, ::testing::ContainsRegex(
                             std::string("allocate dot_packed_lhs_[a-z0-9_$]+\\[float32 \\* ") +
                             (avx512 ? "6 \\* 44000 \\* 2" : "4 \\* 44000 \\* 3") + "\\]"));
  // A transposed lhs is packed whole, at the root, from 1 MiB (512^2).
  ASSERT_OK_AND_ASSIGN(const std::string transposed_1mib, loop_nest_of_gemm(512, 512, 512, true));
  ASSERT_OK_AND_ASSIGN(const std::string transposed_256kib, loop_nest_of_gemm(256, 256, 256, true));
  EXPECT_THAT(transposed_1mib, ::testing::ContainsRegex("produce dot_packed_lhs_[^\n]*\\{\n"
                                                        "(.*\n)* *produce out0[^ ]* \\{"));
  EXPECT_THAT(transposed_256kib, ::testing::Not(::testing::HasSubstr("dot_packed_lhs")));
  // It is copied as it lies: each task walks k once, copying its 8 row
  // tiles' side-by-side values at each k (not a gather along k). (Where
  // the tile's rows do not divide m, the last task is peeled: the loop
  // sits inside an if.)
  EXPECT_THAT(transposed_1mib,
              ::testing::ContainsRegex("par_for_dot_packed_lhs[a-z0-9_]*_qtask \\([^\n]*\n(.*\n){0,8}"
                                       " *for \\(dot_packed_lhs[^,\n]*\\.qk, 0, 512\\)"));
  // The register tile's loop takes 2 k steps per iteration.
  EXPECT_THAT(sixteen_mib, ::testing::ContainsRegex("for \\([^,]+k_outer, 0, 1024\\)"));
  EXPECT_THAT(four_mib, ::testing::ContainsRegex("for \\([^,]+k_outer, 0, 512\\)"));
}

// A kernel's dump prints its Funcs and its loop nest from one pipeline, so
// the accumulator the Funcs read is the one the loop nest produces.
TEST(DotLoweringTest, DumpedFuncsAndLoopNestShareNames) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule gemm
ENTRY main {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  ROOT d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  ASSERT_OK_AND_ASSIGN(KernelGraph graph, GraphForComputation(*module->entry()));
  ASSERT_OK_AND_ASSIGN(KernelDump dump, KernelCompiler::Global().Dump(graph));
  ASSERT_OK(dump.loop_nest.status());
  const size_t at = dump.funcs.find("dot_acc_");
  ASSERT_NE(at, std::string::npos) << dump.funcs;
  const std::string acc = dump.funcs.substr(at, dump.funcs.find('(', at) - at);
  EXPECT_THAT(*dump.loop_nest, ::testing::HasSubstr("produce " + acc + " {"));
}

// A bf16 lhs over 4 MiB (counted in f32, as packed) is packed block by
// block (with AVX2), converted to f32 once there.
TEST(DotLoweringTest, BlockedBf16LhsIsPackedInF32) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule mixed
ENTRY main {
  a = bf16[1034,1030] parameter(0)
  b = bf16[1030,200] parameter(1)
  ROOT r = f32[1034,200] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"));
  ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*module));
  // With AVX-512's 64 columns a tile, 200 columns are 4 panels: chunked, not blocked.
  if (nest.find("avx512") == std::string::npos) {
    EXPECT_THAT(nest, ::testing::HasSubstr("produce dot_packed_lhs"));
  }
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 23, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // 1030-term sums of magnitude ~10: f32 accumulation is within 1e-3.
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-4, 1e-3, "blocked bf16 dot"));
}

TEST(DotLoweringTest, MixedPrecisionBf16ToF32) {
  const std::string text = R"(
HloModule mixed
ENTRY main {
  a = bf16[9,70] parameter(0)
  b = bf16[70,66] parameter(1)
  ROOT r = f32[9,66] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 17, -1, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-5, "bf16 dot"));
}

}  // namespace
}  // namespace sharc::codegen

namespace sharc::codegen {
namespace {

// Long float rows are summed as vector partial sums (reassociated), so they
// agree with the interpreter to rounding, not bit for bit.
TEST(ReduceLoweringTest, LongRowSumsUseVectorPartials) {
  const std::string text = R"(
HloModule long_rows
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
addd { x = f64[] parameter(0)  y = f64[] parameter(1)  ROOT r = f64[] add(x, y) }
ENTRY main {
  a = f32[3,5001] parameter(0)
  v = f32[20011] parameter(1)
  d = f64[2,4099] parameter(2)
  zero = f32[] constant(0)
  zd = f64[] constant(0)
  r0 = f32[3] reduce(a, zero), dimensions={1}, to_apply=add
  r1 = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  r2 = f64[2] reduce(d, zd), dimensions={1}, to_apply=addd
  ROOT out = (f32[3], f32[], f64[2]) tuple(r0, r1, r2)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 21, 0, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "long rows"));
}

// A sum to a scalar of more than two tasks' worth of elements is cut into
// chunks summed in parallel: one long vector (chunks of its own length, the
// last one short), matrices (chunks of rows: few long rows, many short
// ones) and a matrix of one row (chunks of that row). Chunks of a vector
// walk four pages side by side: `p` is whole groups of pages, `v`, `d` and
// `o` end inside one.
TEST(ReduceLoweringTest, ScalarSumsSplitIntoParallelChunks) {
  const std::string text = R"(
HloModule scalar_sums
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
addd { x = f64[] parameter(0)  y = f64[] parameter(1)  ROOT r = f64[] add(x, y) }
ENTRY main {
  v = f32[300007] parameter(0)
  m = f32[9,40001] parameter(1)
  d = f64[200003] parameter(2)
  w = f32[2003,300] parameter(3)
  o = f32[1,200003] parameter(4)
  p = f32[262144] parameter(5)
  zero = f32[] constant(0.5)
  zd = f64[] constant(0)
  r0 = f32[] reduce(v, zero), dimensions={0}, to_apply=add
  r1 = f32[] reduce(m, zero), dimensions={0,1}, to_apply=add
  r2 = f64[] reduce(d, zd), dimensions={0}, to_apply=addd
  r3 = f32[] reduce(w, zero), dimensions={0,1}, to_apply=add
  r4 = f32[] reduce(o, zero), dimensions={0,1}, to_apply=add
  r5 = f32[] reduce(p, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[], f32[], f64[], f32[], f32[], f32[]) tuple(r0, r1, r2, r3, r4, r5)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 22, 0, 1);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "scalar sums"));
}

}  // namespace
}  // namespace sharc::codegen
