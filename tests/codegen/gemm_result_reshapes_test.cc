// Flattened dots' result reshapes move below their elementwise readers
// (codegen/gemm_result_reshapes.h), so that fusion takes those readers into
// the GEMM's epilogue, and the rewritten programs equal the interpreter,
// fused, with Halide kernels.
#include "codegen/gemm_result_reshapes.h"

#include <string>
#include <vector>

#include "codegen/dot_canonicalizer.h"
#include "codegen/fusion.h"
#include "gtest/gtest.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/verifier.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

// An MLP block as the frontend writes it: a projection with a bias and a
// ReLU, its output projection plus a residual, and the ReLU's gradient
// (a select on the pre-activation) feeding the next dot.
constexpr const char* kMlp = R"(
HloModule mlp
ENTRY main {
  h = f32[4,6,8] parameter(0)
  w1 = f32[8,32] parameter(1)
  b1 = f32[32] parameter(2)
  w2 = f32[32,8] parameter(3)
  dy = f32[4,6,8] parameter(4)
  d1 = f32[4,6,32] dot(h, w1), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bb1 = f32[4,6,32] broadcast(b1), dimensions={2}
  pre = f32[4,6,32] add(d1, bb1)
  zero = f32[] constant(0)
  zeros = f32[4,6,32] broadcast(zero), dimensions={}
  act = f32[4,6,32] maximum(pre, zeros)
  d2 = f32[4,6,8] dot(act, w2), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  out = f32[4,6,8] add(d2, h)
  dact = f32[4,6,32] dot(dy, w2), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  positive = pred[4,6,32] compare(pre, zeros), direction=GT
  dpre = f32[4,6,32] select(positive, dact, zeros)
  dw1 = f32[8,32] dot(h, dpre), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  ROOT t = (f32[4,6,8], f32[8,32]) tuple(out, dw1)
}
)";

// The dot in each fused computation, with the ops computed after it in the
// same kernel.
std::vector<std::vector<hlo::Opcode>> EpiloguesOfDots(const hlo::Module& m) {
  std::vector<std::vector<hlo::Opcode>> epilogues;
  for (const hlo::Instruction* call : m.entry()->instructions()) {
    if (!IsFusionCall(*call)) continue;
    std::vector<hlo::Opcode> ops;
    bool has_dot = false;
    for (const hlo::Instruction* i : call->attr_computation("to_apply")->instructions()) {
      if (i->opcode() == hlo::Opcode::kDot) has_dot = true;
      if (i->opcode() != hlo::Opcode::kParameter && i->opcode() != hlo::Opcode::kConstant) {
        ops.push_back(i->opcode());
      }
    }
    if (has_dot) epilogues.push_back(ops);
  }
  return epilogues;
}

TEST(GemmResultReshapesTest, ElementwiseReadersJoinTheGemmsEpilogue) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kMlp));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(CanonicalizeDots(*rewritten).status());
  ASSERT_OK_AND_ASSIGN(int64_t moved, SinkGemmResultReshapes(*rewritten));
  // pre, act, out, positive, dpre (the broadcasts move with them).
  EXPECT_EQ(moved, 5) << hlo::PrintModule(*rewritten);
  ASSERT_OK(hlo::VerifyModule(*rewritten));
  const std::string text = hlo::PrintModule(*rewritten);
  // The bias add is computed in the GEMM's shape, its broadcast along the
  // kept dim.
  EXPECT_NE(text.find("f32[24,32] add(%d1.gemm"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[24,32] broadcast(%b1), dimensions={1}"), std::string::npos) << text;
  // act's 2-D view for the next dot reads the moved maximum itself.
  EXPECT_EQ(text.find("reshape(%act)"), std::string::npos) << text;

  std::unique_ptr<hlo::Module> fused = rewritten->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  const std::string fused_text = hlo::PrintModule(*fused);
  // d1 takes the bias add (pre is read by two kernels, so it is stored), d2
  // the residual add, dact the ReLU's gradient; dw1 (the weight gradient)
  // has nothing after it.
  int with_epilogue = 0;
  for (const std::vector<hlo::Opcode>& ops : EpiloguesOfDots(*fused)) {
    with_epilogue += ops.size() > 1 ? 1 : 0;
  }
  EXPECT_EQ(with_epilogue, 3) << fused_text;

  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 7);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal interpreted, hlo::Evaluate(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, interpreted));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 2e-5, 2e-6, "fused"));
}

// An op that reads one moved value twice (a squared error after a
// projection): the reshape only it read goes, once.
TEST(GemmResultReshapesTest, AnOpReadingOneReshapeTwiceMoves) {
  constexpr const char* kText = R"(
HloModule squared
ENTRY main {
  h = f32[4,6,8] parameter(0)
  w = f32[8,8] parameter(1)
  t = f32[4,6,8] parameter(2)
  d = f32[4,6,8] dot(h, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  diff = f32[4,6,8] subtract(d, t)
  ROOT sq = f32[4,6,8] multiply(diff, diff)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(CanonicalizeDots(*rewritten).status());
  ASSERT_OK_AND_ASSIGN(int64_t moved, SinkGemmResultReshapes(*rewritten));
  EXPECT_EQ(moved, 2) << hlo::PrintModule(*rewritten);
  ASSERT_OK(hlo::VerifyModule(*rewritten));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 9);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal interpreted, hlo::Evaluate(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, interpreted));
}

// A broadcast along a dim the reshape splits (per batch, not per column)
// cannot be written in the GEMM's shape, so its reader stays.
TEST(GemmResultReshapesTest, BroadcastsOverSplitDimsStay) {
  constexpr const char* kText = R"(
HloModule per_batch
ENTRY main {
  h = f32[4,6,8] parameter(0)
  w = f32[8,5] parameter(1)
  s = f32[4] parameter(2)
  d = f32[4,6,5] dot(h, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  bs = f32[4,6,5] broadcast(s), dimensions={0}
  ROOT scaled = f32[4,6,5] multiply(d, bs)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(CanonicalizeDots(*rewritten).status());
  ASSERT_OK_AND_ASSIGN(int64_t moved, SinkGemmResultReshapes(*rewritten));
  EXPECT_EQ(moved, 0) << hlo::PrintModule(*rewritten);
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 8);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal interpreted, hlo::Evaluate(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, interpreted));
}

}  // namespace
}  // namespace sharc::codegen
