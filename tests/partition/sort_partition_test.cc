// sort under the partitioner: a split along another dimension sorts
// locally; a split along the sorted dimension moves to the first other
// dimension that holds it evenly (an all-to-all there and back, as XLA's
// HandleSort does), or is gathered when none does (a row sorted in pieces is
// not sorted). Every case must compute what the global program computes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/partitioner.h"
#include "tests/partition/partition_and_check.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;

// Shardings as written, no propagation.
std::string PartitionAndCheck(const std::string& text) {
  return testing_util::PartitionAndCheck(text, testing_util::Propagation::kAsWritten);
}

std::string SortModule(int dim, const std::string& sharding, const std::string& dims = "4,6",
                       int devices = 2) {
  return absl::StrCat("HloModule m, num_partitions=", devices, R"(
%lt (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %c = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %k = f32[)", dims, "] parameter(0), sharding=", sharding, R"(
  %v = s32[)", dims, "] parameter(1), sharding=", sharding, R"(
  ROOT %s = (f32[)", dims, "], s32[", dims, "]) sort(%k, %v), dimensions={", dim,
                      R"(}, to_apply=%lt, sharding={)",
                      sharding, ", ", sharding, R"(}
})");
}

TEST(SortPartitionTest, SplitOnAnotherDimensionSortsLocally) {
  std::string local = PartitionAndCheck(SortModule(1, "{devices=[2,1]0,1}"));
  EXPECT_THAT(local, HasSubstr("(f32[2,6], s32[2,6]) sort("));
  EXPECT_THAT(local, ::testing::Not(HasSubstr("all-gather")));
}

TEST(SortPartitionTest, SplitOnTheSortedDimensionMovesToAFreeDimension) {
  std::string local = PartitionAndCheck(SortModule(1, "{devices=[1,2]0,1}"));
  EXPECT_THAT(local, HasSubstr("(f32[2,6], s32[2,6]) sort("));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-to-all"), 4) << local;
  EXPECT_EQ(testing_util::CountOpcode(local, "all-gather"), 0) << local;
  // The free dim already split 2 ways takes the sorted dim's 4 tiles too.
  local = PartitionAndCheck(SortModule(2, "{devices=[1,2,4]<=[8]}", "3,16,8", 8));
  EXPECT_THAT(local, HasSubstr("(f32[3,2,8], s32[3,2,8]) sort("));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-to-all"), 4) << local;
  EXPECT_EQ(testing_util::CountOpcode(local, "all-gather"), 0) << local;
}

TEST(SortPartitionTest, SplitOnTheSortedDimensionIsGatheredWhenNoOtherHoldsIt) {
  std::string local = PartitionAndCheck(SortModule(1, "{devices=[1,2]0,1}", "3,6"));
  EXPECT_THAT(local, HasSubstr("(f32[3,6], s32[3,6]) sort("));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-to-all"), 0) << local;
}

}  // namespace
}  // namespace sharc::spmd
