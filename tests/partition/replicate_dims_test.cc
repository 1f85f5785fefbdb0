// Making split dims whole (XLA's ReplicatePartial, in the reshard step that
// gathers dims): a dim whose every tile holds it whole (size 1 split n
// ways) comes from its first tile by a masked all-reduce; a dim at most half
// as long as its tile count is placed into zeros and all-reduced; any other
// is all-gathered. Each case is partitioned and checked against the global
// program on random inputs.
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

std::string Replicate(int devices, const std::string& shape, const std::string& from,
                      const std::string& to = "{replicated}") {
  return PartitionAndCheck(absl::StrCat("HloModule m, num_partitions=", devices, R"(
ENTRY %e {
  %p = )", shape, " parameter(0), sharding=", from, R"(
  ROOT %c = )", shape, " copy(%p), sharding=", to, "\n}\n"),
                           Propagation::kAsWritten);
}

TEST(ReplicateDimsTest, ADimEveryTileHoldsWholeComesFromTheFirstTile) {
  std::string text = Replicate(4, "f32[1,1]", "{devices=[2,2]<=[4]}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
  text = Replicate(4, "s32[1,7]", "{devices=[2,2]1,3,0,2}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 1) << text;
}

TEST(ReplicateDimsTest, AShortDimIsPlacedAndSummed) {
  std::string text = Replicate(8, "f32[3,5]", "{devices=[8,1]<=[8]}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
  text = Replicate(8, "f32[2,6]", "{devices=[4,2]<=[8]}",
                   "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
}

TEST(ReplicateDimsTest, ALongDimIsAllGathered) {
  std::string text = Replicate(8, "f32[13]", "{devices=[8]<=[8]}");
  EXPECT_EQ(CountOpcode(text, "all-gather"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 0) << text;
}

}  // namespace
}  // namespace sharc::spmd
