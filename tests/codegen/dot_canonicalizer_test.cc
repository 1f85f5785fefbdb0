// Dots become plain 2-D GEMMs between reshapes where their free and
// contracting dims are consecutive (codegen/dot_canonicalizer.h), a dot
// read only by its transpose takes its operands swapped, and the rewritten
// programs equal the interpreter, fused, with Halide kernels.
#include "codegen/dot_canonicalizer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "codegen/fusion.h"
#include "hlo/text/printer.h"
#include "hlo/verifier/verifier.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kDots = R"(
HloModule dots
ENTRY main {
  h = f32[4,6,8] parameter(0)
  w = f32[8,5] parameter(1)
  dy = f32[4,6,5] parameter(2)
  wt = f32[5,8] parameter(3)
  q = f32[3,4,6,8] parameter(4)
  projection = f32[4,6,5] dot(h, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  input_grad = f32[4,6,8] dot(dy, wt), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  weight_grad = f32[8,5] dot(h, dy), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  transposed_w = f32[4,6,5] dot(h, wt), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  batched = f32[3,4,6,6] dot(q, q), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={3}
  plain = f32[8,8] dot(w, wt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  split = f32[6,6] dot(h, h), lhs_contracting_dims={0,2}, rhs_contracting_dims={0,2}
  wg2 = f32[8,5] dot(h, dy), lhs_contracting_dims={0,1}, rhs_contracting_dims={0,1}
  wg2_t = f32[5,8] transpose(wg2), dimensions={1,0}
  plain_t = f32[8,8] transpose(plain), dimensions={1,0}
  ROOT out = (f32[4,6,5], f32[4,6,8], f32[8,5], f32[4,6,5], f32[3,4,6,6], f32[8,8], f32[6,6],
              f32[5,8], f32[8,8])
    tuple(projection, input_grad, weight_grad, transposed_w, batched, plain, split, wg2_t, plain_t)
}
)";

TEST(DotCanonicalizerTest, CollapsesConsecutiveDimsIntoPlainGemms) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kDots));
  ASSERT_OK_AND_ASSIGN(int64_t rewritten, CanonicalizeDots(*module));
  // projection, input_grad, weight_grad, transposed_w, wg2, and wg2's
  // transpose; not the batched dot, the plain one, a contraction over dims
  // 0 and 2 (not consecutive), or the transpose of `plain`, which the tuple
  // reads too.
  EXPECT_EQ(rewritten, 6);
  ASSERT_OK(hlo::VerifyModule(*module));
  const std::string text = hlo::PrintModule(*module);
  EXPECT_THAT(text, HasSubstr("%projection.gemm = f32[24,5] dot(%h.gemm, %w)"));
  EXPECT_THAT(text, HasSubstr("%projection = f32[4,6,5] reshape(%projection.gemm)"));
  // h's 2-D view is made once and shared by the three dots that read it.
  EXPECT_THAT(text, HasSubstr("%transposed_w.gemm = f32[24,5] dot(%h.gemm, %wt)"));
  // A weight gradient: a transposed lhs, and its result needs no reshape.
  EXPECT_THAT(text, HasSubstr("%weight_grad = f32[8,5] dot(%h.gemm, %dy.gemm), "
                              "lhs_contracting_dims={0}, rhs_contracting_dims={0}"));
  EXPECT_THAT(text, Not(HasSubstr("batched.gemm")));
  EXPECT_THAT(text, Not(HasSubstr("split.gemm")));
  EXPECT_THAT(text, Not(HasSubstr("plain.gemm")));
  // The transposed weight gradient is the product with operands swapped.
  EXPECT_THAT(text, HasSubstr("%wg2_t = f32[5,8] dot(%dy.gemm, %h.gemm), "
                              "lhs_contracting_dims={0}, rhs_contracting_dims={0}"));
  EXPECT_THAT(text, HasSubstr("%plain_t = f32[8,8] transpose(%plain)"));
  ASSERT_OK_AND_ASSIGN(int64_t again, CanonicalizeDots(*module));
  EXPECT_EQ(again, 0);  // a fixed point
}

TEST(DotCanonicalizerTest, RewrittenAndFusedEqualsInterpreter) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kDots));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK(CanonicalizeDots(*rewritten).status());
  ASSERT_OK(FuseModule(*rewritten).status());
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 11);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-5, 1e-5, "dots"));
}

// The GEMM packs a weight gradient's lhs ([k, m], contracting its first
// dim) whole from 1 MiB (gemm_packing.h), so the narrower operand should be
// that lhs: a dot whose packed lhs is the wider operand becomes the
// transpose of the swapped product, and a transpose of a dot is not
// absorbed by swapping where the swap would make such a lhs. Smaller and
// non-f32 dots stay as they are. The rewritten program's values are the
// original's bit for bit (the same sums in the same order), both run as
// fused Halide kernels.
TEST(DotCanonicalizerTest, WeightGradientsPackTheNarrowerOperand) {
  constexpr const char* kText = R"(
HloModule wide
ENTRY main {
  dlogits = f32[512,520] parameter(0)
  h = f32[512,40] parameter(1)
  grad = f32[520,40] dot(dlogits, h), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  kept = f32[40,520] dot(h, dlogits), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  kept_t = f32[520,40] transpose(kept), dimensions={1,0}
  small = f32[64,520] parameter(2)
  hs = f32[64,40] parameter(3)
  small_grad = f32[520,40] dot(small, hs), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  wide64 = f64[512,520] parameter(4)
  h64 = f64[512,40] parameter(5)
  grad64 = f64[520,40] dot(wide64, h64), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT out = (f32[520,40], f32[520,40], f32[520,40], f64[520,40]) tuple(grad, kept_t, small_grad, grad64)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::unique_ptr<hlo::Module> rewritten = module->Clone();
  ASSERT_OK_AND_ASSIGN(int64_t count, CanonicalizeDots(*rewritten));
  EXPECT_EQ(count, 1);
  ASSERT_OK(hlo::VerifyModule(*rewritten));
  const std::string text = hlo::PrintModule(*rewritten);
  EXPECT_THAT(text, HasSubstr("f32[40,520] dot(%h, %dlogits), lhs_contracting_dims={0}, "
                              "rhs_contracting_dims={0}"));
  EXPECT_THAT(text, ::testing::ContainsRegex("%grad = f32\\[520,40\\] transpose\\(%grad[.a-z_0-9]*\\), "
                                             "dimensions=\\{1,0\\}"));
  EXPECT_THAT(text, HasSubstr("%kept_t = f32[520,40] transpose(%kept)"));
  EXPECT_THAT(text, HasSubstr("%small_grad = f32[520,40] dot(%small, %hs)"));
  EXPECT_THAT(text, HasSubstr("%grad64 = f64[520,40] dot(%wide64, %h64)"));
  ASSERT_OK_AND_ASSIGN(int64_t again, CanonicalizeDots(*rewritten));
  EXPECT_EQ(again, 0);  // a fixed point
  std::unique_ptr<hlo::Module> original = module->Clone();
  ASSERT_OK(FuseModule(*original).status());
  ASSERT_OK(FuseModule(*rewritten).status());
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 13);
  ASSERT_OK_AND_ASSIGN(hlo::Literal before, testing_util::RunWithHalideFactory(*original, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal after, testing_util::RunWithHalideFactory(*rewritten, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(before, after, 0, 0, "weight gradients, bit for bit"));
}

}  // namespace
}  // namespace sharc::codegen
