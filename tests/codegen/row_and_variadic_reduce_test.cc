// Reductions beyond one plain binary op, and rows: variadic reduce (argmax's
// value+index pairs, ties to the lowest index) and reducers that are whole
// computations, folded in the interpreter's order for every dtype; long rows
// vectorised along the row (exact for integers and max/min, within rounding
// for float sums); softmax and layernorm as one fused row kernel.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "codegen/fusion.h"
#include "codegen/kernel_compiler.h"
#include "codegen/kernel_graph.h"
#include "gtest/gtest.h"
#include "hlo/text/printer.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;
using testing_util::ForType;

// argmax over rows and over the leading dim (ties go to the lower index),
// argmin over everything, and a non-commutative single-input reducer
// (x - y, folded left), whose result depends on the order.
constexpr const char* kVariadic = R"(
HloModule variadic
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
argmin {
  av = T[] parameter(0)  ai = s32[] parameter(1)  bv = T[] parameter(2)  bi = s32[] parameter(3)
  lt = pred[] compare(av, bv), direction=LT
  v = T[] select(lt, av, bv)
  i = s32[] select(lt, ai, bi)
  ROOT r = (T[], s32[]) tuple(v, i)
}
fold { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPS(x, y) }
ENTRY main {
  a = T[9,70] parameter(0)
  v0 = T[] parameter(1)
  io1 = s32[9,70] iota(), iota_dimension=1
  io0 = s32[9,70] iota(), iota_dimension=0
  i0 = s32[] constant(-1)
  r0 = (T[9], s32[9]) reduce(a, io1, v0, i0), dimensions={1}, to_apply=argmax
  r1 = (T[70], s32[70]) reduce(a, io0, v0, i0), dimensions={0}, to_apply=argmax
  r2 = (T[], s32[]) reduce(a, io1, v0, i0), dimensions={0,1}, to_apply=argmin
  r3 = T[9] reduce(a, v0), dimensions={1}, to_apply=fold
  r4 = (T[9,70], s32[9,70]) reduce(a, io1, v0, i0), dimensions={}, to_apply=argmax
  r0v = T[9] get-tuple-element(r0), index=0
  r0i = s32[9] get-tuple-element(r0), index=1
  r1i = s32[70] get-tuple-element(r1), index=1
  r2v = T[] get-tuple-element(r2), index=0
  r2i = s32[] get-tuple-element(r2), index=1
  r4i = s32[9,70] get-tuple-element(r4), index=1
  ROOT out = (T[9], s32[9], s32[70], T[], s32[], T[9], s32[9,70]) tuple(r0v, r0i, r1i, r2v, r2i, r3, r4i)
}
)";

class VariadicReduceTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(VariadicReduceTest, EqualsInterpreterUnfusedAndFused) {
  const std::string text = ForType(kVariadic, GetParam());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  // Small integers so that ties happen.
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 21, -2, 2, true);
  ASSERT_OK(CheckHalideSupports(*module));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal unfused, testing_util::RunWithHalideFactory(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, unfused, 0, 0, "unfused")) << text;
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "fused"))
      << hlo::PrintModule(*fused);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, VariadicReduceTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// Rows long enough for the vectorised row form, with tails that are not a
// multiple of the vector width, ranks 2 and 3.
constexpr const char* kRows = R"(
HloModule rows
acc { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPA(x, y) }
max { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] maximum(x, y) }
min { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] minimum(y, x) }
ENTRY main {
  a = T[5,300] parameter(0)
  b = T[3,2,1027] parameter(1)
  init = T[] parameter(2)
  c = T[2,256] parameter(3)
  r0 = T[5] reduce(a, init), dimensions={1}, to_apply=acc
  r1 = T[3,2] reduce(b, init), dimensions={2}, to_apply=max
  r2 = T[3,2] reduce(b, init), dimensions={2}, to_apply=min
  r3 = T[3,2] reduce(b, init), dimensions={2}, to_apply=acc
  r4 = T[2] reduce(c, init), dimensions={1}, to_apply=max
  ROOT out = (T[5], T[3,2], T[3,2], T[3,2], T[2]) tuple(r0, r1, r2, r3, r4)
}
)";

class RowReductionTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(RowReductionTest, EqualsInterpreter) {
  const PrimitiveType t = GetParam();
  const std::string text = ForType(kRows, t);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  for (uint64_t seed : {31, 32}) {
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, seed);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    // f32/f64 sums of long rows are reassociated (as XLA does); everything
    // else is exact.
    const bool sum_reordered = t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, sum_reordered ? 1e-5 : 0,
                                            sum_reordered ? 2e-4 : 0, "rows"))
        << text;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, RowReductionTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// softmax and layernorm (two-pass: mean, then variance of x - mean) over
// rows of rank-2 and rank-3 arrays with odd row lengths.
constexpr const char* kRowKernels = R"(
HloModule row_kernels
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {
  x = f32[37,300] parameter(0)
  z = f32[2,3,257] parameter(1)
  gamma = f32[257] parameter(2)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[37,300] broadcast(m), dimensions={0}
  s = f32[37,300] subtract(x, bm)
  e = f32[37,300] exponential(s)
  d = f32[37] reduce(e, zero), dimensions={1}, to_apply=add
  bd = f32[37,300] broadcast(d), dimensions={0}
  softmax = f32[37,300] divide(e, bd)
  n = f32[] constant(257)
  eps = f32[] constant(1e-5)
  sum = f32[2,3] reduce(z, zero), dimensions={2}, to_apply=add
  bn = f32[2,3] broadcast(n), dimensions={}
  mean = f32[2,3] divide(sum, bn)
  bmean = f32[2,3,257] broadcast(mean), dimensions={0,1}
  xc = f32[2,3,257] subtract(z, bmean)
  sq = f32[2,3,257] multiply(xc, xc)
  ss = f32[2,3] reduce(sq, zero), dimensions={2}, to_apply=add
  var = f32[2,3] divide(ss, bn)
  beps = f32[2,3] broadcast(eps), dimensions={}
  ve = f32[2,3] add(var, beps)
  rs = f32[2,3] rsqrt(ve)
  brs = f32[2,3,257] broadcast(rs), dimensions={0,1}
  normed = f32[2,3,257] multiply(xc, brs)
  bg = f32[2,3,257] broadcast(gamma), dimensions={2}
  layernorm = f32[2,3,257] multiply(normed, bg)
  ROOT out = (f32[37,300], f32[2,3,257]) tuple(softmax, layernorm)
}
)";

// The reduces of each fused computation.
std::vector<int> ReducesPerFusion(const hlo::Module& m) {
  std::vector<int> counts;
  for (const hlo::Instruction* inst : m.entry()->instructions()) {
    if (!IsFusionCall(*inst)) continue;
    int n = 0;
    for (const hlo::Instruction* i : inst->attr_computation("to_apply")->instructions()) {
      n += i->opcode() == hlo::Opcode::kReduce;
    }
    counts.push_back(n);
  }
  return counts;
}

TEST(RowKernelTest, SiblingReductionsFuseAndEqualInterpreter) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kRowKernels));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  // softmax (max and sum) and layernorm (mean and variance): one kernel
  // each, both reductions inside.
  EXPECT_EQ(ReducesPerFusion(*fused), (std::vector<int>{2, 2})) << hlo::PrintModule(*fused);
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 41);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-6, "fused"));
}

// A row kernel on its own (the benchmark's form): rows in parallel tasks
// with a partial last task (37 rows, 8 per task).
TEST(RowKernelTest, SoftmaxAsOneKernelEqualsInterpreter) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module,
                       hlo::ParseAndVerifyModule(testing_util::SoftmaxText(37, 1030)));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 42, -20, 20);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 1e-7, "softmax"));
}

// Whether the Halide lowering of `text`'s entry (as one kernel) stores the
// value of HLO instruction `name` ("  computed at ..." follows its line).
bool StoredByKernel(const std::string& text, const std::string& name) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) {
    ADD_FAILURE() << module.status() << "\n" << text;
    return false;
  }
  absl::StatusOr<std::string> lowering = testing_util::LoweringOfEntry(**module);
  if (!lowering.ok()) {
    ADD_FAILURE() << lowering.status();
    return false;
  }
  std::vector<std::string> lines = absl::StrSplit(*lowering, '\n');
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind(name + " -> ", 0) == 0) return lines[i + 1].rfind("  computed at ", 0) == 0;
  }
  ADD_FAILURE() << "no line for " << name << " in\n" << *lowering;
  return false;
}

// A row value read by a reduction and by the output is stored once per row
// when it is costly (softmax's exp(x - max)) and recomputed by each reader
// when it is cheap (layernorm's x - mean: a store and a load cost more than
// the subtraction); both ways the kernel equals the interpreter.
TEST(RowKernelTest, StoresCostlyRowValuesAndRecomputesCheapOnes) {
  constexpr const char* kLayernorm = R"(
HloModule layernorm
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  x = f32[19,333] parameter(0)
  zero = f32[] constant(0)
  n = f32[] constant(333)
  sum = f32[19] reduce(x, zero), dimensions={1}, to_apply=add
  bn = f32[19] broadcast(n), dimensions={}
  mean = f32[19] divide(sum, bn)
  bmean = f32[19,333] broadcast(mean), dimensions={0}
  xc = f32[19,333] subtract(x, bmean)
  sq = f32[19,333] multiply(xc, xc)
  ss = f32[19] reduce(sq, zero), dimensions={1}, to_apply=add
  bss = f32[19,333] broadcast(ss), dimensions={0}
  ROOT y = f32[19,333] multiply(xc, bss)
}
)";
  const std::string softmax = absl::StrReplaceAll(kLayernorm, {{"xc = f32[19,333] subtract(x, bmean)",
                                                                 "xs = f32[19,333] subtract(x, bmean)\n"
                                                                 "  xc = f32[19,333] exponential(xs)"}});
  // A float product is stored: recomputed beside a reader's add it could
  // become an FMA there, and the readers would see different values.
  const std::string scaled = absl::StrReplaceAll(
      kLayernorm, {{"xc = f32[19,333] subtract(x, bmean)", "xc = f32[19,333] multiply(x, bmean)"}});
  // x minus a per-column exp(g): the exp is per element of the row, not
  // hoisted like a per-row value, so it counts against recomputing.
  const std::string per_column = absl::StrReplaceAll(
      kLayernorm, {{"xc = f32[19,333] subtract(x, bmean)",
                    "eg = f32[333] exponential(n333)\n"
                    "  beg = f32[19,333] broadcast(eg), dimensions={1}\n"
                    "  xc = f32[19,333] subtract(x, beg)"},
                   {"n = f32[] constant(333)",
                    "n = f32[] constant(333)\n  n333 = f32[333] broadcast(n), dimensions={}"}});
  EXPECT_FALSE(StoredByKernel(kLayernorm, "xc"));
  EXPECT_TRUE(StoredByKernel(softmax, "xc"));
  EXPECT_TRUE(StoredByKernel(scaled, "xc"));
  EXPECT_TRUE(StoredByKernel(per_column, "xc"));
  EXPECT_TRUE(StoredByKernel(kLayernorm, "sum"));  // reductions are always stored per row
  for (const std::string& text : {std::string(kLayernorm), softmax, scaled, per_column}) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 43);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    // atol: the kernel's mean (a reassociated sum) is off by ~6e-8, which
    // x - mean keeps and the output scales by the sum of squares (~100).
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 1e-4, "row kernel")) << text;
  }
}

// Long rows reduced by maximum and minimum (vectorised along the row, with
// the lanes folded at the end) propagate NaN wherever it sits: first in the
// row (the accumulator's side), last, in the middle, alone or with +-inf,
// and in every row, for each float width (bf16 is reduced in f32 and
// stored back). A row of alternating -0 and +0 gives a zero; which
// one depends on the order, which the vectorised reduction does not keep
// (LiteralsMatch does not compare zeros' signs).
TEST(RowReduceTest, MaxAndMinPropagateNanFromEitherSide) {
  for (hlo::PrimitiveType t : {hlo::PrimitiveType::kF32, hlo::PrimitiveType::kF64,
                               hlo::PrimitiveType::kBF16}) {
    const std::string type = hlo::PrimitiveTypeName(t);
    const std::string text = testing_util::ForType(R"(
HloModule nan_rows
max { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] maximum(x, y) }
min { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] minimum(x, y) }
ENTRY main {
  a = T[8,1031] parameter(0)
  ninf = T[] constant(-inf)
  inf = T[] constant(inf)
  mx = T[8] reduce(a, ninf), dimensions={1}, to_apply=max
  mn = T[8] reduce(a, inf), dimensions={1}, to_apply=min
  ROOT t = (T[8], T[8]) tuple(mx, mn)
}
)", t);
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
    std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 17);
    const double nan = std::nan("");
    const double inf = std::numeric_limits<double>::infinity();
    auto at = [](int row, int col) { return int64_t{row} * 1031 + col; };
    args[0].SetFromDouble(at(0, 0), nan);     // row 0: NaN first
    args[0].SetFromDouble(at(1, 1030), nan);  // row 1: NaN last
    args[0].SetFromDouble(at(2, 517), nan);   // row 2: NaN in the middle, beside +-inf
    args[0].SetFromDouble(at(2, 516), inf);
    args[0].SetFromDouble(at(2, 518), -inf);
    for (int c = 0; c < 1031; ++c) args[0].SetFromDouble(at(3, c), nan);  // row 3: all NaN
    for (int c = 0; c < 1031; ++c) args[0].SetFromDouble(at(4, c), c % 2 ? 0.0 : -0.0);  // row 4: zeros
    args[0].SetFromDouble(at(5, 15), nan);    // row 5: NaN in the first vector's last lane
    args[0].SetFromDouble(at(5, 1024), nan);  // ... and in the tail
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "max/min rows " + type));
    for (int r : {0, 1, 2, 3, 5}) {
      EXPECT_TRUE(std::isnan(actual.element(0).GetAsDouble(r))) << type << " max of row " << r;
      EXPECT_TRUE(std::isnan(actual.element(1).GetAsDouble(r))) << type << " min of row " << r;
    }
    EXPECT_EQ(actual.element(0).GetAsDouble(4), 0.0) << type;
    EXPECT_EQ(actual.element(1).GetAsDouble(4), 0.0) << type;
  }
}

}  // namespace
}  // namespace sharc::codegen
