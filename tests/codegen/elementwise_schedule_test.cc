// A big rank-1 elementwise output is split into parallel tasks, and each
// task walks four pages side by side, a few vectors of each at a time; a
// big output of long rows walks four rows side by side
// (codegen/pipeline_builder.cc). Every element must still get its own value:
// for every element type (a page holds 4096 / bytes elements, so the groups
// differ per type), at lengths that are whole groups, one element more or
// less, and past the last whole task (Halide shifts that task inwards).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "tests/codegen/codegen_test_util.h"

namespace sharc::codegen {
namespace {

using testing_util::AllTypes;
using testing_util::ForType;
using testing_util::LiteralsMatch;
using testing_util::RandomArgs;
using testing_util::RunAsOneKernel;

// x OPS y then OPA x: no multiply feeds an add, so nothing contracts into an
// FMA and the kernel must match the interpreter bit for bit.
constexpr const char* kChain = R"(
HloModule interleaved
ENTRY main {
  x = T[$N] parameter(0)
  y = T[$N] parameter(1)
  d = T[$N] OPS(x, y)
  ROOT r = T[$N] OPA(d, x)
}
)";

TEST(ElementwiseScheduleTest, InterleavedPagesGiveEveryElementItsValue) {
  testing_util::UseFreshCacheDir();
  // 32768 is the smallest parallel output (four f32 groups of four pages);
  // 65536 + 4099 leaves a partial last task for every type.
  for (int64_t n : {int64_t{32768}, int64_t{32767 + 2}, int64_t{65536 + 4099}}) {
    for (hlo::PrimitiveType t : AllTypes()) {
      const std::string text =
          absl::StrReplaceAll(ForType(kChain, t), {{"$N", absl::StrCat(n)}});
      SCOPED_TRACE(text);
      absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<hlo::Literal> args = RandomArgs(**module, 7);
      absl::StatusOr<hlo::Literal> expected = hlo::Evaluate(**module, args);
      ASSERT_TRUE(expected.ok()) << expected.status();
      absl::StatusOr<hlo::Literal> actual = RunAsOneKernel(**module, args);
      ASSERT_TRUE(actual.ok()) << actual.status();
      EXPECT_TRUE(LiteralsMatch(*expected, *actual, 0, 0));
    }
  }
}

// Rows of a page or more are walked four at a time: a row count that is not
// a multiple of four (the last group is guarded), rank 3 (the outer dim
// parallel), rows of 16 KiB or more (prefetching within the row), and a
// row length that is not a whole number of steps (the ordinary schedule).
TEST(ElementwiseScheduleTest, InterleavedRowsGiveEveryElementItsValue) {
  testing_util::UseFreshCacheDir();
  for (const char* dims : {"37,4096", "3,5,4096", "9,16384", "33,4100"}) {
    for (hlo::PrimitiveType t : AllTypes()) {
      const std::string text = absl::StrReplaceAll(ForType(kChain, t), {{"$N", dims}});
      SCOPED_TRACE(text);
      absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<hlo::Literal> args = RandomArgs(**module, 11);
      absl::StatusOr<hlo::Literal> expected = hlo::Evaluate(**module, args);
      ASSERT_TRUE(expected.ok()) << expected.status();
      absl::StatusOr<hlo::Literal> actual = RunAsOneKernel(**module, args);
      ASSERT_TRUE(actual.ok()) << actual.status();
      EXPECT_TRUE(LiteralsMatch(*expected, *actual, 0, 0));
    }
  }
}

}  // namespace
}  // namespace sharc::codegen
