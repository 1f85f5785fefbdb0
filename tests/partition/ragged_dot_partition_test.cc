// ragged-dot under the partitioner: its ragged dim (whose groups count
// global positions), the rhs group dim and a contracting-mode result's
// group dim stay whole; batch, free and contracting dims split as a dot's
// do. Every case must compute what the global program computes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"
#include "tests/partition/partition_and_check.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing_util::PartitionAndCheck;

// Rows 0-4 use w[0], none w[1], rows 5-11 w[2], rows 12-15 nothing.
std::string NonContracting(const std::string& x, const std::string& w, const std::string& out) {
  return absl::StrCat(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[16,8] parameter(0), sharding=)", x, R"(
  w = f32[3,8,6] parameter(1), sharding=)", w, R"(
  sizes = s32[3] constant({5, 0, 7})
  ROOT r = f32[16,6] ragged-dot(x, w, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}, sharding=)",
                      out, "\n}\n");
}

TEST(RaggedDotPartitionTest, SplitOutputFeaturesRunLocally) {
  std::string local = PartitionAndCheck(
      NonContracting("{replicated}", "{devices=[1,1,2]0,1}", "{devices=[1,2]0,1}"));
  EXPECT_THAT(local, HasSubstr("f32[16,3] ragged-dot"));
  EXPECT_THAT(local, Not(HasSubstr("all-gather")));
}

TEST(RaggedDotPartitionTest, SplitContractionLeavesPartialSums) {
  std::string local = PartitionAndCheck(
      NonContracting("{devices=[1,2]0,1}", "{devices=[1,2,1]0,1}", "{replicated}"));
  EXPECT_THAT(local, HasSubstr("f32[16,6] ragged-dot"));
  EXPECT_THAT(local, HasSubstr("all-reduce("));
  EXPECT_THAT(local, Not(HasSubstr("all-gather")));
}

TEST(RaggedDotPartitionTest, TheRaggedDimIsGatheredNotSplit) {
  std::string local = PartitionAndCheck(
      NonContracting("{devices=[2,1]0,1}", "{replicated}", "{devices=[2,1]0,1}"));
  EXPECT_THAT(local, HasSubstr("f32[16,6] ragged-dot"));
}

TEST(RaggedDotPartitionTest, ContractingAndBatchModesSplitTheirOtherDims) {
  // Contracting mode: the result's leading group dim stays whole, the
  // batch and the rhs free dim split.
  std::string contracting = PartitionAndCheck(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[2,10,8] parameter(0), sharding={devices=[2,1,1,2]<=[4] last_tile_dim_replicate}
  w = f32[2,8,6] parameter(1), sharding={devices=[2,1,2]<=[4]}
  sizes = s32[3] constant({3, 4, 1})
  ROOT r = f32[3,2,10,6] ragged-dot(x, w, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}, sharding={devices=[1,2,1,2]<=[4]}
})");
  EXPECT_THAT(contracting, HasSubstr("f32[3,1,10,3] ragged-dot"));
  // Batch mode: the ragged batch dim stays whole, the rows split.
  std::string batch = PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,10,8] parameter(0), sharding={devices=[1,2,1]0,1}
  w = f32[4,8,6] parameter(1), sharding={replicated}
  sizes = s32[2] constant({1, 2})
  ROOT r = f32[4,10,6] ragged-dot(x, w, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, sharding={devices=[1,2,1]0,1}
})");
  EXPECT_THAT(batch, HasSubstr("f32[4,5,6] ragged-dot"));
  EXPECT_THAT(batch, Not(HasSubstr("all-gather")));
}

}  // namespace
}  // namespace sharc::spmd
