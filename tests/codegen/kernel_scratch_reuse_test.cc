// Kernels' own scratch (Halide's halide_malloc) comes from the runtime's
// reusing allocator: a GEMM with a transposed lhs (a weight gradient's
// form), run twice, takes its packed lhs from the block its first run gave
// back, and still computes the interpreter's values.
#include <vector>

#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "runtime/kernel_scratch.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

TEST(KernelScratchReuseTest, SecondGemmRunReusesThePackedLhs) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(R"(
HloModule gemm
ENTRY main {
  a = f32[512,192] parameter(0)
  b = f32[512,320] parameter(1)
  ROOT d = f32[192,320] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
)"));
  std::vector<hlo::Literal> args = testing_util::RandomArgs(*module, 7);
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal first, testing_util::RunWithHalideFactory(*module, args));
  const runtime::KernelScratchStats after_first = runtime::GetKernelScratchStats();
  EXPECT_GT(after_first.misses, 0) << "the GEMM allocated no pooled scratch";
  ASSERT_OK_AND_ASSIGN(hlo::Literal second, testing_util::RunWithHalideFactory(*module, args));
  const runtime::KernelScratchStats after_second = runtime::GetKernelScratchStats();
  // Reused, not allocated again. (Not "no miss at all": the second run may
  // pack on more threads at once than the first did.)
  EXPECT_GT(after_second.hits, after_first.hits);
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, first, 1e-3, 1e-4, "first"));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, second, 1e-3, 1e-4, "second"));
}

}  // namespace
}  // namespace sharc::codegen
