// A big elementwise output of a memory-bound kernel walks four pages side
// by side, a few vectors of each at a time, or four rows side by side when
// its rows are a page or longer (codegen/pipeline_builder.cc). Every
// element must still get its own value: for every element type (a page
// holds 4096 / bytes elements, so the groups differ per type), at lengths
// that are whole groups and past the last whole task (Halide shifts that
// task inwards), row counts that are not a multiple of four (the last
// group is guarded), and with an input twice as wide as the output (its
// prefetches count elements, not the output's bytes).
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

// The smallest output that is walked page by page: 4 MiB.
constexpr int64_t kInterleavedBytes = int64_t{4} << 20;

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

void ExpectMatchesInterpreter(const std::string& text) {
  SCOPED_TRACE(text.substr(0, 120));
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<hlo::Literal> args = RandomArgs(**module, 7);
  absl::StatusOr<hlo::Literal> expected = hlo::Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<hlo::Literal> actual = RunAsOneKernel(**module, args);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_TRUE(LiteralsMatch(*expected, *actual, 0, 0));
}

TEST(ElementwiseScheduleTest, InterleavedPagesGiveEveryElementItsValue) {
  testing_util::UseFreshCacheDir();
  for (hlo::PrimitiveType t : AllTypes()) {
    const int64_t n = kInterleavedBytes / hlo::ByteWidth(t);
    for (int64_t length : {n, n + 4099}) {
      ExpectMatchesInterpreter(
          absl::StrReplaceAll(ForType(kChain, t), {{"$N", absl::StrCat(length)}}));
    }
  }
}

TEST(ElementwiseScheduleTest, InterleavedRowsGiveEveryElementItsValue) {
  testing_util::UseFreshCacheDir();
  for (hlo::PrimitiveType t : AllTypes()) {
    const int64_t page = 4096 / hlo::ByteWidth(t);
    // 37 rows of 32 pages (prefetching within the row), 1027 rows of one
    // page (prefetching into the next group of rows).
    // Rank 3 with its outer dims fused into rows: a batch of one, and 39
    // rows of one page.
    for (const std::string& dims : {absl::StrCat("37,", 32 * page), absl::StrCat("1027,", page),
                                    absl::StrCat("1,37,", 32 * page), absl::StrCat("3,13,", page)}) {
      ExpectMatchesInterpreter(absl::StrReplaceAll(ForType(kChain, t), {{"$N", dims}}));
    }
  }
}

// Outputs too small to walk pages, parallel over their rows: rank 3 with a
// batch of one, and rows shorter than a vector grouped into tasks.
TEST(ElementwiseScheduleTest, RowsOfSmallOutputsGiveEveryElementItsValue) {
  testing_util::UseFreshCacheDir();
  for (hlo::PrimitiveType t : AllTypes()) {
    for (const char* dims : {"1,9,4099", "64,128,5", "2,3,40000"}) {
      ExpectMatchesInterpreter(absl::StrReplaceAll(ForType(kChain, t), {{"$N", dims}}));
    }
  }
}

// f32 in, f16 out: the output's 4 MiB walk sets the prefetch distance, the
// 16 MiB input is streamed and prefetched at twice the output's byte step.
TEST(ElementwiseScheduleTest, NarrowingKernelWithStreamedInput) {
  testing_util::UseFreshCacheDir();
  ExpectMatchesInterpreter(R"(
HloModule narrowing
ENTRY main {
  x = f32[4194304] parameter(0)
  y = f32[4194304] parameter(1)
  s = f32[4194304] subtract(x, y)
  ROOT h = f16[4194304] convert(s)
}
)");
}

}  // namespace
}  // namespace sharc::codegen
