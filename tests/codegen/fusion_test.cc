// The fusion pass: which instructions end up in one kernel, that the fused
// module still prints, parses and interprets to the same result, and that
// its Halide kernels equal the interpreter on the unfused program.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "gtest/gtest.h"
#include "hlo/text/printer.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

constexpr const char* kModule = R"(
HloModule fusion
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {
  x = f32[37,70] parameter(0)
  w = f32[70,67] parameter(1)
  bias = f32[67] parameter(2)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rowmax = f32[37] reduce(x, ninf), dimensions={1}, to_apply=max
  bmax = f32[37,70] broadcast(rowmax), dimensions={0}
  shifted = f32[37,70] subtract(x, bmax)
  e = f32[37,70] exponential(shifted)
  sum = f32[37] reduce(e, zero), dimensions={1}, to_apply=add
  bsum = f32[37,70] broadcast(sum), dimensions={0}
  softmax = f32[37,70] divide(e, bsum)
  mm = f32[37,67] dot(softmax, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[37,67] broadcast(bias), dimensions={1}
  biased = f32[37,67] add(mm, bb)
  act = f32[37,67] tanh(biased)
  t = f32[67,37] transpose(act), dimensions={1,0}
  ROOT out = (f32[37,67], f32[67,37]) tuple(act, t)
}
)";

int CountFusions(const hlo::Module& m) {
  int n = 0;
  for (const hlo::Instruction* inst : m.entry()->instructions()) n += IsFusionCall(*inst);
  return n;
}

TEST(FusionTest, GroupsReductionsWithProducersAndDotsWithEpilogues) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kModule));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK_AND_ASSIGN(FusionStats stats, FuseModule(*fused));
  const std::string text = hlo::PrintModule(*fused);
  // Fusions: the softmax (row max and row sum are sibling reductions over
  // the same rows, so they share the kernel with their producers and the
  // divide) and the dot with its bias+tanh epilogue. The transpose reads
  // `act`, which the tuple also needs, so it stays alone.
  EXPECT_EQ(stats.fusions, 2) << text;
  int reduces_in_fusions = 0;
  for (const hlo::Instruction* inst : fused->entry()->instructions()) {
    EXPECT_NE(inst->opcode(), hlo::Opcode::kReduce) << text;
    if (!IsFusionCall(*inst)) continue;
    for (const hlo::Instruction* i : inst->attr_computation("to_apply")->instructions()) {
      reduces_in_fusions += i->opcode() == hlo::Opcode::kReduce;
    }
  }
  EXPECT_EQ(reduces_in_fusions, 2) << text;
  EXPECT_EQ(CountFusions(*fused), stats.fusions);
  // The dot and its epilogue share one fused computation.
  bool dot_with_tanh = false;
  for (const hlo::Computation* c : fused->computations()) {
    bool has_dot = false, has_tanh = false;
    for (const hlo::Instruction* inst : c->instructions()) {
      has_dot |= inst->opcode() == hlo::Opcode::kDot;
      has_tanh |= inst->opcode() == hlo::Opcode::kTanh;
    }
    dot_with_tanh |= has_dot && has_tanh && c != fused->entry();
  }
  EXPECT_TRUE(dot_with_tanh) << text;
  // No collective-free module loses instructions to fusion: the fused module
  // parses back and interprets to the same values.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> reparsed, hlo::ParseAndVerifyModule(text));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 3);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal reinterpreted, hlo::Evaluate(*reparsed, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, reinterpreted));
}

TEST(FusionTest, FusedHalideKernelsEqualInterpreter) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kModule));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 4);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-6, "fused"));
  // Unfused, one kernel per instruction, gives the same.
  ASSERT_OK_AND_ASSIGN(hlo::Literal unfused, testing_util::RunWithHalideFactory(*module, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, unfused, 2e-5, 2e-6, "unfused"));
}

TEST(FusionTest, CollectivesAndControlFlowAreBoundaries) {
  constexpr const char* kText = R"(
HloModule boundaries
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
cond { s = (s32[], f32[8]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       n = s32[] constant(3)  ROOT c = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[8]) parameter(0)  i = s32[] get-tuple-element(s), index=0
       v = f32[8] get-tuple-element(s), index=1  one = s32[] constant(1)
       j = s32[] add(i, one)  e = f32[8] exponential(v)  h = f32[8] multiply(e, v)
       ROOT t = (s32[], f32[8]) tuple(j, h) }
ENTRY main {
  x = f32[8] parameter(0)
  n = f32[8] negate(x)
  s = f32[8] sine(n)
  r = f32[8] all-reduce(s), to_apply=add
  a = f32[8] abs(r)
  c = f32[8] cosine(a)
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, c)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT v = f32[8] get-tuple-element(w), index=1
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(FusionStats stats, FuseModule(*module));
  // negate+sine before the all-reduce, abs+cosine after it, exp+multiply in
  // the loop body: three fusions, the all-reduce and the while untouched.
  EXPECT_EQ(stats.fusions, 3) << hlo::PrintModule(*module);
  int all_reduces = 0;
  for (const hlo::Instruction* inst : module->entry()->instructions()) {
    all_reduces += inst->opcode() == hlo::Opcode::kAllReduce;
  }
  EXPECT_EQ(all_reduces, 1);
}

// A mask and a broadcast two kernels read (as CSE leaves them) are computed
// in each kernel instead of stored: no kernel of their own remains. A
// compute-bound value two kernels read is stored once, and so is a sum of
// full-size arrays (each copy would read both arrays again).
TEST(FusionTest, CheapSharedProducersAreRecomputedInEachKernel) {
  constexpr const char* kText = R"(
HloModule shared
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  x = f32[16,24] parameter(0)
  y = f32[16,24] parameter(1)
  i0 = s32[16,24] iota(), iota_dimension=0
  i1 = s32[16,24] iota(), iota_dimension=1
  m = pred[16,24] compare(i0, i1), direction=GE
  zero = f32[] constant(0)
  bz = f32[16,24] broadcast(zero), dimensions={}
  a = f32[16,24] select(m, x, bz)
  ea = f32[16,24] exponential(a)
  b = f32[16,24] select(m, y, bz)
  ey = f32[16,24] exponential(y)
  ab = f32[16,24] add(ey, b)
  sa = f32[16] reduce(ea, zero), dimensions={1}, to_apply=add
  sb = f32[24] reduce(ab, zero), dimensions={0}, to_apply=add
  sy = f32[16] reduce(ey, zero), dimensions={1}, to_apply=add
  xy = f32[16,24] add(x, y)
  rows = f32[16] reduce(xy, zero), dimensions={1}, to_apply=add
  cols = f32[24] reduce(xy, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[16], f32[24], f32[16], f32[16], f32[24]) tuple(sa, sb, sy, rows, cols)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  const std::string text = hlo::PrintModule(*fused);
  int exps_outside = 0, adds_outside = 0;
  for (const hlo::Instruction* inst : fused->entry()->instructions()) {
    const hlo::Opcode op = inst->opcode();
    EXPECT_TRUE(op != hlo::Opcode::kCompare && op != hlo::Opcode::kIota &&
                op != hlo::Opcode::kBroadcast && op != hlo::Opcode::kSelect)
        << inst->name() << " should be computed inside the kernels that read it\n" << text;
    exps_outside += op == hlo::Opcode::kExp;
    adds_outside += op == hlo::Opcode::kAdd;
  }
  // `ey` is read by two kernels and costs a transcendental per element.
  EXPECT_EQ(exps_outside, 1) << text;
  EXPECT_EQ(adds_outside, 1) << text;
  int masks_in_fusions = 0;
  for (const hlo::Instruction* inst : fused->entry()->instructions()) {
    if (!IsFusionCall(*inst)) continue;
    for (const hlo::Instruction* i : inst->attr_computation("to_apply")->instructions()) {
      masks_in_fusions += i->opcode() == hlo::Opcode::kCompare;
    }
  }
  EXPECT_EQ(masks_in_fusions, 2) << text;
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 5);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> reparsed, hlo::ParseAndVerifyModule(text));
  ASSERT_OK_AND_ASSIGN(hlo::Literal reinterpreted, hlo::Evaluate(*reparsed, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, reinterpreted));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-6, "fused"));
}

// Softmax, its probabilities read by a dot, and a gradient that reads the
// scores, the max, the exp, their sum and the probabilities: the forward
// becomes one row kernel reading the scores, and the gradient computes the
// max, the exp and the sum again from the scores it reads anyway
// (fusion_recompute.h). The probabilities stay an input of the gradient
// (the dot stores them anyway), and so does `q`, which it could compute only
// by reading `y`, a buffer it does not read otherwise.
TEST(FusionTest, RowKernelsRecomputeWhatTheyCanFromTheirInputs) {
  constexpr const char* kText = R"(
HloModule softmax_gradient
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {
  s = f32[32,48] parameter(0)
  v = f32[48,16] parameter(1)
  dp = f32[32,48] parameter(2)
  y = f32[32,48] parameter(3)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[32] reduce(s, ninf), dimensions={1}, to_apply=max
  bm = f32[32,48] broadcast(m), dimensions={0}
  x = f32[32,48] subtract(s, bm)
  e = f32[32,48] exponential(x)
  z = f32[32] reduce(e, zero), dimensions={1}, to_apply=add
  lz = f32[32] log(z)
  blz = f32[32,48] broadcast(lz), dimensions={0}
  ls = f32[32,48] subtract(x, blz)
  p = f32[32,48] exponential(ls)
  ctx = f32[32,16] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dpp = f32[32,48] multiply(dp, p)
  r = f32[32] reduce(dpp, zero), dimensions={1}, to_apply=add
  br = f32[32,48] broadcast(r), dimensions={0}
  bz = f32[32,48] broadcast(z), dimensions={0}
  ez = f32[32,48] divide(e, bz)
  t = f32[32,48] multiply(br, ez)
  g0 = f32[32,48] subtract(dpp, t)
  at_max = pred[32,48] compare(s, bm), direction=EQ
  c = f32[32,48] convert(at_max)
  q = f32[32,48] exponential(y)
  qy = f32[32,48] add(q, y)
  cq = f32[32,48] multiply(c, q)
  g = f32[32,48] add(g0, cq)
  ROOT out = (f32[32,16], f32[32,48], f32[32,48]) tuple(ctx, g, qy)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  const std::string text = hlo::PrintModule(*fused);
  // The values read by the kernel computing `root_name`, each named by the
  // instruction computing it.
  auto inputs_of = [&](const std::string& root_name) {
    std::vector<std::string> names;
    for (const hlo::Instruction* inst : fused->entry()->instructions()) {
      if (!IsFusionCall(*inst) ||
          inst->attr_computation("to_apply")->root()->name() != root_name) {
        continue;
      }
      for (const hlo::Instruction* operand : inst->operands()) {
        names.push_back(IsFusionCall(*operand)
                            ? operand->attr_computation("to_apply")->root()->name()
                            : operand->name());
      }
    }
    return names;
  };
  // The forward: one kernel from the scores to the probabilities.
  EXPECT_EQ(inputs_of("p"), std::vector<std::string>({"s"})) << text;
  // The gradient reads the scores, dp, the stored probabilities and q.
  std::vector<std::string> gradient_inputs = inputs_of("g");
  std::sort(gradient_inputs.begin(), gradient_inputs.end());
  EXPECT_EQ(gradient_inputs, std::vector<std::string>({"dp", "p", "q", "s"})) << text;
  for (const hlo::Instruction* inst : fused->entry()->instructions()) {
    EXPECT_NE(inst->opcode(), hlo::Opcode::kReduce) << text;
  }
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 6);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> reparsed, hlo::ParseAndVerifyModule(text));
  ASSERT_OK_AND_ASSIGN(hlo::Literal reinterpreted, hlo::Evaluate(*reparsed, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, reinterpreted));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-6, "fused"));
}

}  // namespace
}  // namespace sharc::codegen
