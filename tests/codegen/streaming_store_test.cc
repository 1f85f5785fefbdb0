// Kernels whose outputs reach 16 MiB write them with non-temporal stores,
// and inputs that large are prefetched ahead (codegen/object_writer.h).
// Their results must not change: the stores that were aligned at run time
// and the ones that were not (odd row lengths, shifted vector tails) both
// land, and the data is visible after the kernel returns. Small kernels,
// and kernels with a dot (codegen/kernel_compiler.cc), are left alone.
#include "absl/strings/str_cat.h"
#include "codegen/kernel_compiler.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using testing_util::LiteralsMatch;
using testing_util::RandomArgs;
using testing_util::RunAsOneKernel;

struct Edits {
  int64_t nontemporal_stores = -1;
  int64_t prefetches = -1;
};

// Runs `text` as one kernel and against the interpreter; returns how many
// stores the compile made non-temporal and how many prefetches it added.
Edits CheckAgainstInterpreter(const std::string& text, double tolerance) {
  testing_util::UseFreshCacheDir();
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return {};
  std::vector<hlo::Literal> args = RandomArgs(**module, 3);
  absl::StatusOr<hlo::Literal> expected = hlo::Evaluate(**module, args);
  EXPECT_TRUE(expected.ok()) << expected.status();
  const CompileStats before = KernelCompiler::Global().stats();
  absl::StatusOr<hlo::Literal> actual = RunAsOneKernel(**module, args);
  EXPECT_TRUE(actual.ok()) << actual.status();
  if (!expected.ok() || !actual.ok()) return {};
  EXPECT_TRUE(LiteralsMatch(*expected, *actual, tolerance, tolerance));
  const CompileStats after = KernelCompiler::Global().stats();
  return {after.nontemporal_stores - before.nontemporal_stores,
          after.prefetches - before.prefetches};
}

// 16 MiB + 12 bytes: the last vector is shifted inwards, so unaligned.
TEST(StreamingStoreTest, LargeElementwiseOutputIsExact) {
  const Edits edits = CheckAgainstInterpreter(R"(
HloModule big_elementwise
ENTRY main {
  x = f32[4194307] parameter(0)
  y = f32[4194307] parameter(1)
  s = f32[4194307] add(x, y)
  ROOT r = f32[4194307] multiply(s, x)
}
)",
                                              0);
  EXPECT_GT(edits.nontemporal_stores, 0);
  EXPECT_GT(edits.prefetches, 0);  // both inputs are 16 MiB too
}

// Rows of 2051 floats: most rows start at an address that is not 64-byte
// aligned, so the run-time check sends their stores down the ordinary path.
TEST(StreamingStoreTest, RowKernelWithUnalignedRows) {
  EXPECT_GT(CheckAgainstInterpreter(R"(
HloModule big_rows
max { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ENTRY main {
  x = f32[2049,2051] parameter(0)
  lowest = f32[] constant(-inf)
  rmax = f32[2049] reduce(x, lowest), dimensions={1}, to_apply=max
  bmax = f32[2049,2051] broadcast(rmax), dimensions={0}
  ROOT d = f32[2049,2051] subtract(x, bmax)
}
)",
                                    0)
                .nontemporal_stores,
            0);
}

// Two outputs of 8 MiB each: together large enough, and both are streamed.
TEST(StreamingStoreTest, MultiOutputKernel) {
  EXPECT_GE(CheckAgainstInterpreter(R"(
HloModule big_pair
ENTRY main {
  a = f32[2097157] parameter(0)
  b = f32[2097157] parameter(1)
  s = f32[2097157] add(a, b)
  p = f32[2097157] multiply(a, b)
  ROOT t = (f32[2097157], f32[2097157]) tuple(s, p)
}
)",
                                    0)
                .nontemporal_stores,
            2);
}

// The edits in an f32 [m,k] x [k,n] GEMM, checked against the interpreter.
Edits GemmEdits(int m, int k, int n) {
  return CheckAgainstInterpreter(
      absl::StrCat("HloModule gemm\nENTRY main {\n  a = f32[", m, ",", k, "] parameter(0)\n",
                   "  b = f32[", k, ",", n, "] parameter(1)\n  ROOT d = f32[", m, ",", n,
                   "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"),
      1e-3);
}

// Neither a GEMM's 16 MiB result nor its 16 MiB rhs (read in vectors as its
// panels are packed) is streamed. Both expectations fail without the dot
// exception.
TEST(StreamingStoreTest, DotKernelsAreLeftAlone) {
  EXPECT_EQ(GemmEdits(2048, 8, 2048).nontemporal_stores, 0);
  EXPECT_EQ(GemmEdits(8, 1024, 4096).prefetches, 0);
}

TEST(StreamingStoreTest, SmallBuffersAreLeftAlone) {
  const Edits edits = CheckAgainstInterpreter(R"(
HloModule small
ENTRY main {
  x = f32[4099] parameter(0)
  ROOT r = f32[4099] tanh(x)
}
)",
                                              2e-6);
  EXPECT_EQ(edits.nontemporal_stores, 0);
  EXPECT_EQ(edits.prefetches, 0);
}

}  // namespace
}  // namespace sharc::codegen
