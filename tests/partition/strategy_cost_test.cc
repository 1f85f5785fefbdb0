// The partitioner's choice among the plans for one op (strategy.h): each is
// costed by the bytes one device sends, and the cheapest is taken. These
// cases have a cheaper plan that a rule counting resharded operands first
// would miss, and ties whose winner is fixed; each partitioned program is
// also run against the global one.
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/partition/partitioner.h"
#include "spmd/partition/strategy.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using hlo::Shape;
using hlo::Sharding;

Sharding S(const std::string& text) {
  absl::StatusOr<Sharding> s = hlo::ParseSharding(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Sharding::Replicated();
}

// The issue's example: lhs f32[64,32] split 8 ways on its contracting dim,
// rhs replicated, the result split on rows. Moving the lhs's split to its
// rows is one all-to-all of 7/8 of a 1 KiB shard (896 B per device); a local
// dot over the split contracting dim leaves an f32[64,16] partial sum whose
// reduce-scatter sends 7/8 of 4 KiB (3584 B).
constexpr char kRowSplitDot[] = R"(
HloModule row_split_dot, num_partitions=8

ENTRY main {
  lhs = f32[64,32] parameter(0), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
  rhs = f32[32,16] parameter(1), sharding={replicated}
  ROOT dot = f32[64,16] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[8,1]0,1,2,3,4,5,6,7}
}
)";

TEST(StrategyCost, DotMovesTheSmallerOperandWithAnAllToAll) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kRowSplitDot));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=0 all-gather=0 reduce-scatter=0 all-to-all=1 collective-permute=0");
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 1));
}

TEST(StrategyCost, ExplanationListsEachPlanWithItsBytes) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kRowSplitDot));
  ASSERT_OK_AND_ASSIGN(std::string text, ExplainPartitionChoice(*global, "dot"));
  // The chosen plan (marked *) is the row split with its all-to-all; the
  // contracting split is listed with its reduce-scatter.
  EXPECT_NE(text.find("* 1. {devices=[8,1,1]0,1,2,3,4,5,6,7}: 896 B"), std::string::npos) << text;
  EXPECT_NE(text.find("-> {devices=[8,1]0,1,2,3,4,5,6,7}: all-to-all: 896 B"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reduce-scatter over 8 devices: 3584 B"), std::string::npos) << text;
  EXPECT_NE(text.find("chose plan 1: the fewest bytes"), std::string::npos) << text;
  EXPECT_EQ(ExplainPartitionChoice(*global, "nope").status().code(), absl::StatusCode::kNotFound);
}

// Per-device bytes of reshards, counted as the cost report counts the
// collectives they become.
TEST(StrategyCost, ReshardBytesFollowTheCollectives) {
  const Shape shape(hlo::PrimitiveType::kF32, {64, 32});  // 8 KiB
  // all-to-all: 7/8 of the 1 KiB shard.
  EXPECT_EQ(ReshardBytesSent(shape, S("{devices=[1,8]0,1,2,3,4,5,6,7}"),
                             S("{devices=[8,1]0,1,2,3,4,5,6,7}")),
            896);
  // all-gather to replicated: the 7 shards a device lacks pass through it.
  EXPECT_EQ(ReshardBytesSent(shape, S("{devices=[8,1]0,1,2,3,4,5,6,7}"), S("{replicated}")),
            7 * 1024);
  // Refining a split is a local slice.
  EXPECT_EQ(ReshardBytesSent(shape, S("{replicated}"), S("{devices=[8,1]0,1,2,3,4,5,6,7}")), 0);
  // Same tiling, other device order: each moved shard once.
  EXPECT_EQ(ReshardBytesSent(shape, S("{devices=[8,1]0,1,2,3,4,5,6,7}"),
                             S("{devices=[8,1]1,0,2,3,4,5,6,7}")),
            1024);
}

// Both operands split on the contracting dim, result replicated: the local
// dot plus an all-reduce of the f32[32,32] partial sum (2*7/8 of 4 KiB)
// beats gathering both operands (7/8 of 2 x 32 KiB).
TEST(StrategyCost, ContractingSplitStaysAnAllReduce) {
  constexpr char kText[] = R"(
HloModule contracting, num_partitions=8

ENTRY main {
  lhs = f32[32,256] parameter(0), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
  rhs = f32[256,32] parameter(1), sharding={devices=[8,1]0,1,2,3,4,5,6,7}
  ROOT dot = f32[32,32] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=1 all-gather=0 reduce-scatter=0 all-to-all=0 collective-permute=0");
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 2));
}

// Both operands split alike on the contracting dim, the result on columns:
// gathering the lhs and moving the rhs's split (35840 B) sends less than
// reduce-scattering the f32[128,256] partial product (114688 B), but the
// plan taking both operands as they are comes first, as in GSPMD's dot
// handler (the shared conformance case 04 is this program).
TEST(StrategyCost, PlanTakingOperandsAsTheyAreComesFirst) {
  constexpr char kText[] = R"(
HloModule contracting_rs, num_partitions=8

ENTRY main {
  lhs = f32[128,64] parameter(0), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
  rhs = f32[64,256] parameter(1), sharding={devices=[8,1]0,1,2,3,4,5,6,7}
  ROOT dot = f32[128,256] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,8]0,1,2,3,4,5,6,7}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(std::string text, ExplainPartitionChoice(*global, "dot"));
  EXPECT_NE(text.find("1. {devices=[1,8,1]0,1,2,3,4,5,6,7}: 35840 B"), std::string::npos) << text;
  EXPECT_NE(text.find("* 2. {devices=[1,1,8]0,1,2,3,4,5,6,7}: 114688 B"), std::string::npos)
      << text;
  EXPECT_NE(text.find("chose plan 2: it splits the op with every operand as it is"), std::string::npos) << text;
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=0 all-gather=0 reduce-scatter=1 all-to-all=0 collective-permute=0");
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 4));
}

// Both operands split 2 ways on the contracting dim and replicated on the
// other 2 devices; the result split on the lhs's rows across those. Taking
// the operands as they are all-reduces the whole f32[24,32] product and
// slices it (3072 B); slicing the lhs's rows locally first halves the dot
// and the all-reduce (1536 B), as XLA's dot handler does
// (DotPartialContracting2).
TEST(StrategyCost, SlicingAnOperandLocallyBeatsTakingItAsItIsWhenCheaper) {
  constexpr char kText[] = R"(
HloModule partial_contracting, num_partitions=4

ENTRY main {
  lhs = f32[24,100] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  rhs = f32[32,100] parameter(1), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  ROOT dot = f32[24,32] dot(lhs, rhs), lhs_contracting_dims={1}, rhs_contracting_dims={1}, sharding={devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(std::string text, ExplainPartitionChoice(*global, "dot"));
  EXPECT_NE(text.find("its operands only slice locally what they hold"), std::string::npos) << text;
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=1 all-gather=0 reduce-scatter=0 all-to-all=0 collective-permute=0");
  EXPECT_NE(local->ToString().find("f32[12,32] dot("), std::string::npos) << local->ToString();
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 4));
}

// A tie on bytes: a row-split value plus a replicated one, the sum split on
// columns. Adding on columns (moving the operand's split with an
// all-to-all) and adding on rows (moving the sum's) send the same 1792 B; the
// tie keeps the earlier plan, the result's sharding, as GSPMD does for
// elementwise ops.
TEST(StrategyCost, TieKeepsTheResultsSharding) {
  constexpr char kText[] = R"(
HloModule tie, num_partitions=8

ENTRY main {
  a = f32[64,64] parameter(0), sharding={devices=[8,1]0,1,2,3,4,5,6,7}
  b = f32[64,64] parameter(1), sharding={replicated}
  ROOT add = f32[64,64] add(a, b), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(std::string text, ExplainPartitionChoice(*global, "add"));
  EXPECT_NE(text.find("* 1. {devices=[1,8]0,1,2,3,4,5,6,7}: 1792 B"), std::string::npos) << text;
  EXPECT_NE(text.find("  2. {devices=[8,1]0,1,2,3,4,5,6,7}: 1792 B"), std::string::npos) << text;
  EXPECT_NE(text.find("chose plan 1: the fewest bytes; of the plans tied with it, the earliest"),
            std::string::npos)
      << text;
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 3));
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

// Batch and lhs-row splits on both operands, the result split like the
// lhs: gathering the rhs's rows gives the result its layout directly, as
// GSPMD partitions toward the result. Gathering the (smaller) lhs instead
// sends fewer operand bytes but then moves the result with an all-to-all.
TEST(StrategyCost, ADotPartitionsTowardItsResultsLayout) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %lhs = f32[4,24,100] parameter(0), sharding={devices=[2,2,1]<=[4]}
  %rhs = f32[4,32,100] parameter(1), sharding={devices=[2,2,1]<=[4]}
  ROOT %dot = f32[4,24,32] dot(%lhs, %rhs), lhs_batch_dims={0}, rhs_batch_dims={0},
      lhs_contracting_dims={2}, rhs_contracting_dims={2}, sharding={devices=[2,2,1]<=[4]}
})"));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=0 all-gather=1 reduce-scatter=0 all-to-all=0 collective-permute=0");
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 1));
}

}  // namespace
}  // namespace sharc::spmd
