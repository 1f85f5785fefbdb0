// Resharding by all-to-all (spmd/partition/reshard_all_to_all.h): which
// steps XLA's partitioner would take between two tilings with the same tile
// counts in other places, and that the per-device programs compute the
// global values (even and uneven dims, replication groups, several pairs of
// dims in one all-to-all, a device order fixed by a collective-permute).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/text/parser.h"
#include "spmd/partition/reshard.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

std::string Steps(const std::string& shape, const std::string& from, const std::string& to) {
  auto s = hlo::ParseShape(shape);
  auto f = hlo::ParseSharding(from);
  auto t = hlo::ParseSharding(to);
  EXPECT_TRUE(s.ok() && f.ok() && t.ok());
  auto steps = PlanReshard(*s, *f, *t);
  EXPECT_TRUE(steps.ok()) << steps.status();
  std::vector<std::string> names;
  for (const ReshardStep& step : *steps) names.push_back(std::string(step.target));
  return absl::StrJoin(names, ",");
}

// A copy from one layout to another, partitioned and checked.
std::string Reshard(int devices, const std::string& shape, const std::string& from,
                    const std::string& to) {
  return PartitionAndCheck(absl::StrCat("HloModule m, num_partitions=", devices, R"(
ENTRY %e {
  %p = )", shape, " parameter(0), sharding=", from, R"(
  ROOT %c = )", shape, " copy(%p), sharding=", to, "\n}\n"),
                           Propagation::kAsWritten);
}

TEST(ReshardAllToAllTest, StepsFollowXlasPairing) {
  // Two pairs of dims that divide evenly: one all-to-all.
  EXPECT_EQ(Steps("f32[32,32,32,32]", "{devices=[1,4,2,1]<=[8]}", "{devices=[2,1,1,4]<=[8]}"),
            "SpmdAllToAll,SpmdCollectivePermute");
  // Pairs that share a dim go one after the other, then the device order
  // is fixed (XLA's SubgroupAllToAllReshard3).
  EXPECT_EQ(Steps("f32[8,8,8]", "{devices=[2,4,1]<=[8]}", "{devices=[1,2,4]0,1,4,5,2,3,6,7}"),
            "SpmdAllToAll,SpmdAllToAll,SpmdCollectivePermute");
  // An uneven dim whose partner is whole still moves by all-to-all.
  EXPECT_EQ(Steps("f32[7,31,16]", "{devices=[2,1,1]0,1}", "{devices=[1,2,1]0,1}"), "SpmdAllToAll");
  // Counts no swap reaches, but one dim's minor tiles moving to another
  // (XLA's ComplexReshardSplitToRight): one all-to-all.
  EXPECT_EQ(Steps("f32[8,8]", "{devices=[4,1]<=[4]}", "{devices=[2,2]<=[4]}"), "SpmdAllToAll");
  // ... into a dim already split (a sort's moved dim), other device order.
  EXPECT_EQ(Steps("f32[4,16,8]", "{devices=[1,2,4]<=[8]}", "{devices=[1,8,1]<=[8]}"),
            "SpmdAllToAll");
  EXPECT_EQ(Steps("f32[4,16,8]", "{devices=[1,2,4]<=[8]}", "{devices=[1,8,1]<=[4,2]T(1,0)}"),
            "SpmdAllToAll,SpmdCollectivePermute");
  // ... but not with an uneven dim: XLA gathers (NoComplexReshardSplitToLeft).
  EXPECT_EQ(Steps("f32[8,33]", "{devices=[1,8]<=[8]}", "{devices=[2,4]<=[4,2]T(1,0)}"),
            "SpmdAllGather,SpmdAllSlice");
  // Counts neither reaches: not this way.
  EXPECT_EQ(Steps("f32[8,8,8]", "{devices=[4,1,1]<=[4]}", "{devices=[1,2,2]<=[4]}"),
            "SpmdAllGather,SpmdAllSlice");
}

TEST(ReshardAllToAllTest, MovedTilesComputeTheGlobalValues) {
  std::string text = Reshard(4, "f32[8,8]", "{devices=[4,1]<=[4]}", "{devices=[2,2]<=[4]}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
  text = Reshard(8, "f32[4,16,8]", "{devices=[1,2,4]<=[8]}", "{devices=[1,8,1]<=[8]}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  text = Reshard(8, "f32[4,16,8]", "{devices=[1,8,1]<=[8]}", "{devices=[1,2,4]<=[8]}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  text = Reshard(8, "f32[4,16,8]", "{devices=[1,2,4]<=[8]}", "{devices=[1,8,1]<=[4,2]T(1,0)}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "collective-permute"), 1) << text;
  // Within replication groups.
  text = Reshard(8, "f32[8,8]", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
                 "{devices=[2,2,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
}

TEST(ReshardAllToAllTest, PerDeviceProgramsComputeTheGlobalValues) {
  std::string text = Reshard(8, "f32[8,16,4,8]", "{devices=[1,4,2,1]<=[8]}", "{devices=[2,1,1,4]<=[8]}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
  text = Reshard(2, "f32[7,31,16]", "{devices=[2,1,1]0,1}", "{devices=[1,2,1]0,1}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  text = Reshard(8, "f32[8,8,8]", "{devices=[2,4,1]<=[8]}", "{devices=[1,2,4]0,1,4,5,2,3,6,7}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 2) << text;
  EXPECT_EQ(CountOpcode(text, "collective-permute"), 1) << text;
  // Within replication groups, with a shuffled device order.
  text = Reshard(8, "f32[12,6,5]", "{devices=[2,1,1,4]5,1,6,7,0,4,2,3 last_tile_dim_replicate}",
                 "{devices=[1,2,1,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
  EXPECT_EQ(CountOpcode(text, "all-to-all"), 1) << text;
  EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << text;
}

}  // namespace
}  // namespace sharc::spmd
