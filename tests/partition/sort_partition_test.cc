// sort under the partitioner: a split along the sorted dimension is gathered
// first (a row sorted in pieces is not sorted), a split along another
// dimension sorts locally. Every case must compute what the global program
// computes.
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

std::string SortModule(int dim, const std::string& sharding) {
  return absl::StrCat(R"(HloModule m, num_partitions=2
%lt (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %c = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %k = f32[4,6] parameter(0), sharding=)", sharding, R"(
  %v = s32[4,6] parameter(1), sharding=)", sharding, R"(
  ROOT %s = (f32[4,6], s32[4,6]) sort(%k, %v), dimensions={)", dim, R"(}, to_apply=%lt, sharding={)",
                      sharding, ", ", sharding, R"(}
})");
}

TEST(SortPartitionTest, SplitOnAnotherDimensionSortsLocally) {
  std::string local = PartitionAndCheck(SortModule(1, "{devices=[2,1]0,1}"));
  EXPECT_THAT(local, HasSubstr("(f32[2,6], s32[2,6]) sort("));
  EXPECT_THAT(local, ::testing::Not(HasSubstr("all-gather")));
}

TEST(SortPartitionTest, SplitOnTheSortedDimensionIsGatheredFirst) {
  std::string local = PartitionAndCheck(SortModule(1, "{devices=[1,2]0,1}"));
  EXPECT_THAT(local, HasSubstr("(f32[4,6], s32[4,6]) sort("));
}

}  // namespace
}  // namespace sharc::spmd
