// Maximal shardings ({maximal device=d}) as XLA's partitioner takes them: the
// value is right only on device d (its data lives there: the test harness
// gives the other devices noise), an op whose sharding is maximal runs there
// on operands taken there, and a maximal value read by any other device is
// broadcast from its own by a masked all-reduce (an all-gather for types
// with no exact combine). Each module is partitioned and checked against the
// global program.
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

std::string CopyBetween(const std::string& shape, const std::string& from, const std::string& to,
                        int devices = 2) {
  return PartitionAndCheck(absl::StrCat("HloModule m, num_partitions=", devices, R"(
ENTRY %e {
  %p = )", shape, " parameter(0), sharding=", from, R"(
  ROOT %c = )", shape, " copy(%p), sharding=", to, "\n}\n"),
                           Propagation::kAsWritten);
}

TEST(MaximalPartitionTest, ReplicatingIsABroadcastFromItsDevice) {
  std::string text = CopyBetween("f32[2,3]", "{maximal device=1}", "{replicated}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "select"), 1) << text;
  text = CopyBetween("s32[5]", "{maximal device=2}", "{replicated}", 4);
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
}

TEST(MaximalPartitionTest, MovingToAnotherDeviceIsABroadcast) {
  std::string text = CopyBetween("f32[2,3]", "{maximal device=0}", "{maximal device=1}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  text = CopyBetween("f32[2,3]", "{maximal device=1}", "{maximal device=1}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 0) << text;
}

TEST(MaximalPartitionTest, TilingIsABroadcastThenALocalSlice) {
  std::string text = CopyBetween("f32[4,3]", "{maximal device=0}", "{devices=[2,1]1,0}");
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
  EXPECT_EQ(CountOpcode(text, "dynamic-slice"), 3) << text;  // two offset tables, one tile
}

TEST(MaximalPartitionTest, TypesWithNoExactCombineAreGathered) {
  std::string text = CopyBetween("f8e4m3fn[3]", "{maximal device=1}", "{replicated}");
  EXPECT_EQ(CountOpcode(text, "all-gather"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 0) << text;
}

TEST(MaximalPartitionTest, AnOpOnOneDeviceTakesItsOperandsThere) {
  // The reduce runs on device 0 from its operands there: a tiled operand is
  // gathered, the maximal ones are already there; its result leaves device
  // 0 by a broadcast.
  std::string text = PartitionAndCheck(R"(
HloModule m, num_partitions=2
%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  %init = f32[] parameter(1), sharding={maximal device=0}
  %r = f32[8] reduce(%x, %init), dimensions={1}, to_apply=%add, sharding={maximal device=0}
  ROOT %out = f32[8] negate(%r), sharding={devices=[2]0,1}
}
)",
                                       Propagation::kAsWritten);
  EXPECT_EQ(CountOpcode(text, "all-gather"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
}

TEST(MaximalPartitionTest, TokensAreNotBroadcast) {
  std::string text = PartitionAndCheck(R"(
HloModule m, num_partitions=2
ENTRY %e {
  %t = token[] after-all(), sharding={maximal device=0}
  %x = f32[4] parameter(0), sharding={devices=[2]0,1}
  %u = token[] after-all(%t), sharding={maximal device=1}
  %v = token[] after-all(%u), sharding={replicated}
  %y = f32[4] add-dependency(%x, %v), sharding={devices=[2]0,1}
  ROOT %z = f32[4] negate(%y), sharding={devices=[2]0,1}
}
)",
                                       Propagation::kAsWritten);
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 0) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
}

TEST(MaximalPartitionTest, AReplicatedDrawIsMadeOnDeviceZeroAndBroadcast) {
  std::string text = PartitionAndCheck(R"(
HloModule m, num_partitions=2
ENTRY %e {
  %lo = s32[] constant(0), sharding={replicated}
  %hi = s32[] constant(100), sharding={replicated}
  ROOT %r = s32[6] rng(%lo, %hi), distribution=rng_uniform, sharding={replicated}
}
)",
                                       Propagation::kAsWritten);
  EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << text;
}

}  // namespace
}  // namespace sharc::spmd
