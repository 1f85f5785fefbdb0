// Partially manual regions that split data inside the region
// (last_tile_dims={manual} with tiled data dims after a
// SPMDFullToShardShape): the devices of a manual group share the group's
// value and reshard it among themselves only; SPMDShardToFullShape takes
// each device's tile as its tile of the result (as in GSPMD). Each case runs
// on simulated devices against a global program that computes the same.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "spmd/partition/partitioner.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

int Count(const hlo::Module& m, hlo::Opcode op) {
  int n = 0;
  for (const hlo::Computation* c : m.computations())
    for (const hlo::Instruction* i : c->instructions()) n += i->opcode() == op;
  return n;
}

// 8 devices: 4 manual groups {0,1} {2,3} {4,5} {6,7}; inside, each group's
// s32[2,6] is split in halves along dim 0 by its two devices (device 2g+1
// holds row 1), negated, gathered again within the group for the reverse
// (which reads the whole group value), and handed back split along dim 1.
constexpr char kProgram[] = R"(HloModule pm, num_partitions=8
ENTRY %main {
  %x = s32[8,6] parameter(0), sharding={devices=[4,1,2]<=[8] last_tile_dim_replicate}
  %m = s32[2,6] custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}
  %n = s32[2,6] negate(%m), sharding={devices=[2,1,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  %r = s32[2,6] reverse(%n), dimensions={0}, sharding={devices=[1,1,4,2]<=[8] last_tile_dims={manual, replicated}}
  %s = s32[2,6] add(%r, %n), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dims={manual}}
  ROOT %y = s32[8,6] custom-call(%s), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,2]<=[8]}
})";

// The same on global values: each group's rows [2g, 2g+2) reversed within
// the pair and added to themselves, negated.
constexpr char kReference[] = R"(HloModule pm_reference
ENTRY %main {
  %x = s32[8,6] parameter(0)
  %n = s32[8,6] negate(%x)
  %p = s32[4,2,6] reshape(%n)
  %q = s32[4,2,6] reverse(%p), dimensions={1}
  %r = s32[8,6] reshape(%q)
  ROOT %s = s32[8,6] add(%r, %n)
})";

TEST(PartialManualTest, DataSplitInsideTheRegionMovesOnlyWithinManualGroups) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kProgram));
  ASSERT_OK_AND_ASSIGN(auto reference, hlo::ParseAndVerifyModule(kReference));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  // The reverse reads the whole group value: gathered within the pairs,
  // never across groups.
  EXPECT_GE(Count(*local, hlo::Opcode::kAllGather), 1) << hlo::PrintModule(*local);
  for (const hlo::Computation* c : local->computations()) {
    for (const hlo::Instruction* i : c->instructions()) {
      if (i->opcode() != hlo::Opcode::kAllGather) continue;
      EXPECT_EQ(i->attr_int_lists("replica_groups"),
                (hlo::IntListList{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
    }
  }
  for (uint32_t seed : {1u, 2u}) {
    EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, seed,
                                                           absl::Seconds(60), reference.get()))
        << hlo::PrintModule(*local);
  }
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

// A partially manual all-reduce sums within manual subgroups (the devices
// that differ only along the manual dim); a replica group reaching into
// another subgroup is refused, naming the group, as GSPMD refuses it.
TEST(PartialManualTest, AllReduceAcrossManualSubgroupsIsRefused) {
  auto module = [](const std::string& groups) {
    return absl::StrCat(R"(HloModule m, num_partitions=4
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2,2] parameter(0), sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}
  ROOT r = f32[2,2] all-reduce(p), to_apply=sum, replica_groups=)",
                        groups, R"(, use_global_device_ids=true, channel_id=1, sharding={devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}
})");
  };
  ASSERT_OK_AND_ASSIGN(auto within, hlo::ParseAndVerifyModule(module("{{2,0},{1,3}}")));
  EXPECT_OK(PartitionModule(*within).status());
  ASSERT_OK_AND_ASSIGN(auto across, hlo::ParseAndVerifyModule(module("{{1,0},{2,3}}")));
  absl::StatusOr<std::unique_ptr<hlo::Module>> refused = PartitionModule(*across);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("manual all-reduce across devices that belong to different "
                                   "manual subgroups: replica group {1,0}"));
}

}  // namespace
}  // namespace sharc::spmd
