// select-and-scatter under the partitioner. A dim whose windows tile it
// (size <= stride, no padding: max-pool backward with stride >= window) is
// split like an elementwise dim, operand and source alike, with no
// communication; a dim whose windows overlap is gathered first. Every case
// runs the per-device program against the global one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// operand f32[rows,6], source f32[rows/stride (rounded as the window says),6]
// with the given window and sharding on both inputs and the result.
std::string Module(int64_t rows, int64_t source_rows, const std::string& window,
                   const std::string& sharding, int64_t partitions) {
  return absl::StrCat("HloModule sas, num_partitions=", partitions, R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[)", rows, ",6] parameter(0), sharding=", sharding, R"(
  s = f32[)", source_rows, ",6] parameter(1), sharding=", sharding, R"(
  zero = f32[] constant(0)
  ROOT r = f32[)", rows, R"(,6] select-and-scatter(x, s, zero), window={)", window,
                      "}, select=ge, scatter=sum, sharding=", sharding, R"(
})");
}

std::string PartitionAsWritten(const std::string& text) {
  return testing_util::PartitionAndCheck(text, testing_util::Propagation::kAsWritten);
}

TEST(SelectAndScatterPartitionTest, TilingWindowsSplitWithoutCommunication) {
  // 16 rows in windows of 2 at stride 2: each of 4 devices owns 2 windows.
  std::string local =
      PartitionAsWritten(Module(16, 8, "size=2x1 stride=2x1", "{devices=[4,1]<=[4]}", 4));
  EXPECT_THAT(local, HasSubstr("f32[4,6] select-and-scatter("));
  EXPECT_THAT(local, Not(HasSubstr("all-gather")));
}

TEST(SelectAndScatterPartitionTest, WindowsNarrowerThanTheStrideSplitToo) {
  // RetinaNet's form: unit windows at stride 2 (every other row is selected).
  std::string local =
      PartitionAsWritten(Module(16, 8, "size=1x1 stride=2x1", "{devices=[4,1]<=[4]}", 4));
  EXPECT_THAT(local, HasSubstr("f32[4,6] select-and-scatter("));
  EXPECT_THAT(local, Not(HasSubstr("all-gather")));
}

TEST(SelectAndScatterPartitionTest, UnevenSplitOfTheWindowsMatches) {
  // 5 windows of 3 rows over 2 devices: one device holds a padded window.
  std::string local =
      PartitionAsWritten(Module(15, 5, "size=3x1 stride=3x1", "{devices=[2,1]<=[2]}", 2));
  EXPECT_THAT(local, HasSubstr("select-and-scatter("));
}

TEST(SelectAndScatterPartitionTest, OverlappingWindowsAreGatheredFirst) {
  // Windows of 3 at stride 2, padded by one row: 8 windows over 16 rows,
  // each reaching into its neighbour's rows.
  std::string local = PartitionAsWritten(
      Module(16, 8, "size=3x1 stride=2x1 pad=1_0x0_0", "{devices=[4,1]<=[4]}", 4));
  EXPECT_THAT(local, HasSubstr("f32[16,6] select-and-scatter("));
}

TEST(SelectAndScatterPartitionTest, RowsBeyondTheLastWindowAreGatheredFirst) {
  // 17 rows, windows of 2 at stride 2 cover only 16: the dim does not tile.
  std::string local =
      PartitionAsWritten(Module(17, 8, "size=2x1 stride=2x1", "{devices=[4,1]<=[4]}", 4));
  EXPECT_THAT(local, HasSubstr("f32[17,6] select-and-scatter("));
}

TEST(SelectAndScatterPartitionTest, PropagationSplitsTheSourceAlongTheWindows) {
  // Only the operand is annotated (2x2 pooling windows over a 16x6 image);
  // the source and the result take its split along the window index (the
  // unannotated root is then gathered, as any entry result).
  const std::string text = R"(HloModule sas, num_partitions=2
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,6] parameter(0), sharding={devices=[2,1]<=[2]}
  s = f32[8,3] parameter(1)
  zero = f32[] constant(0)
  ROOT r = f32[16,6] select-and-scatter(x, s, zero), window={size=2x2 stride=2x2}, select=ge, scatter=sum
})";
  std::string local = testing_util::PartitionAndCheck(text);
  EXPECT_THAT(local, HasSubstr("f32[8,6] select-and-scatter("));
  EXPECT_THAT(local, HasSubstr("f32[4,3]"));
}

}  // namespace
}  // namespace sharc::spmd
