// Which devices a collective's groups name, by XLA's group modes, on a
// module of 2 replicas x 2 partitions (global id = replica * 2 + partition)
// and on per-device programs whose header declares no device count.
#include "hlo/ops/collective_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/ops/collective_devices.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// Parsed, not verified: the verifier bounds ids by the header's device
// count, which a per-device program without one does not give.
std::unique_ptr<Module> Parse(const std::string& header, const std::string& body) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(absl::StrCat(header, R"(

%sum {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[4] parameter(0)
  ROOT %c = f32[4] )", body, "\n}\n"));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

const Instruction& Root(const Module& m) { return *m.entry()->root(); }

TEST(CollectiveGroupsTest, ModesFollowChannelIdAndGlobalDeviceIds) {
  const std::string h = "HloModule m, replica_count=2, num_partitions=2";
  auto none = Parse(h, "all-reduce(%x), replica_groups={}, to_apply=%sum");
  auto channel = Parse(h, "all-reduce(%x), channel_id=1, replica_groups={}, to_apply=%sum");
  auto global = Parse(h,
                      "all-reduce(%x), channel_id=1, replica_groups={{0,3},{1,2}}, "
                      "use_global_device_ids=true, to_apply=%sum");
  auto a2a = Parse(h, "all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}");
  EXPECT_EQ(GroupModeOf(Root(*none)), CollectiveGroupMode::kCrossReplica);
  EXPECT_EQ(GroupModeOf(Root(*channel)), CollectiveGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(GroupModeOf(Root(*global)), CollectiveGroupMode::kFlattenedId);
  EXPECT_EQ(GroupModeOf(Root(*a2a)), CollectiveGroupMode::kCrossPartition);
  // Device 3 is replica 1, partition 1: without a channel it meets its
  // partition's replicas, with one (and replica ids) every partition of
  // those replicas, with global ids its listed group, and an all-to-all
  // its replica's partitions.
  EXPECT_THAT(*CollectiveGroup(Root(*none), 3, 4), ElementsAre(1, 3));
  EXPECT_THAT(*CollectiveGroup(Root(*channel), 3, 4), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(*CollectiveGroup(Root(*global), 3, 4), ElementsAre(0, 3));
  EXPECT_THAT(*CollectiveGroup(Root(*a2a), 3, 4), ElementsAre(2, 3));
}

TEST(CollectiveGroupsTest, WithoutAChannelOnePartitionedReplicaReducesAlone) {
  auto m =
      Parse("HloModule m, num_partitions=4", "all-reduce(%x), replica_groups={}, to_apply=%sum");
  EXPECT_THAT(*CollectiveGroup(Root(*m), 2, 4), ElementsAre(2));
  EXPECT_TRUE(IsSingletonCollective(Root(*m), 4));
  // Over 4 replicas the same op reduces across all of them.
  auto replicas =
      Parse("HloModule m, replica_count=4", "all-reduce(%x), replica_groups={}, to_apply=%sum");
  EXPECT_THAT(*CollectiveGroup(Root(*replicas), 2, 4), ElementsAre(0, 1, 2, 3));
  EXPECT_FALSE(IsSingletonCollective(Root(*replicas), 4));
}

TEST(CollectiveGroupsTest, PermutePairsRepeatPerReplicaOrPerPartition) {
  const std::string h = "HloModule m, replica_count=2, num_partitions=2";
  auto partitions = Parse(h, "collective-permute(%x), channel_id=1, source_target_pairs={{0,1}}");
  EXPECT_THAT(*GlobalPairs(Root(*partitions), 4), ElementsAre(Pair(0, 1), Pair(2, 3)));
  auto replicas = Parse(h, "collective-permute(%x), source_target_pairs={{0,1}}");
  EXPECT_THAT(*GlobalPairs(Root(*replicas), 4), ElementsAre(Pair(0, 2), Pair(1, 3)));
}

TEST(CollectiveGroupsTest, AProgramWithoutADeviceCountNamesDevices) {
  // A per-device program run with --devices 4: ids are device ids.
  auto m = Parse("HloModule m", "all-reduce(%x), replica_groups={{0,2},{1,3}}, to_apply=%sum");
  EXPECT_THAT(*CollectiveGroup(Root(*m), 3, 4), ElementsAre(1, 3));
}

TEST(CollectiveGroupsTest, IdsOutsideTheGridAreErrors) {
  auto m = Parse("HloModule m, num_partitions=4",
                 "all-reduce(%x), replica_groups={{0,1},{2,3}}, to_apply=%sum");
  EXPECT_THAT(CollectiveGroup(Root(*m), 0, 4),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("names replica 1 but there are 1 replicas")));
}

// XLA's verifier lets an all-reduce's groups differ in size (its result
// shape does not depend on them), not an all-gather's. Each device then
// reduces over its own group.
TEST(CollectiveGroupsTest, AllReduceGroupsMayDifferInSize) {
  auto reduce = Parse("HloModule m, replica_count=7",
                      "all-reduce(%x), channel_id=5, replica_groups={{0,2,4},{1,3,5,6}}, "
                      "to_apply=%sum");
  ASSERT_OK(VerifyModule(*reduce));
  EXPECT_THAT(*CollectiveGroup(Root(*reduce), 2, 7), ElementsAre(0, 2, 4));
  EXPECT_THAT(*CollectiveGroup(Root(*reduce), 6, 7), ElementsAre(1, 3, 5, 6));
  absl::StatusOr<std::unique_ptr<Module>> gather = ParseModule(R"(HloModule m, replica_count=7
ENTRY %main {
  %x = f32[4] parameter(0)
  ROOT %c = f32[12] all-gather(%x), channel_id=5, replica_groups={{0,2,4},{1,3,5,6}}, dimensions={0}
})");
  ASSERT_OK(gather.status());
  EXPECT_THAT(VerifyModule(**gather),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("all groups must have the same size")));
}

// A per-device program without a device count: a channel on an all-reduce
// without global ids still makes its ids replicas (cross-replica-and-
// partition), so the count they imply is a replica count; an all-to-all's
// channel makes them partitions.
TEST(CollectiveGroupsTest, ReplicaIdsAreToldApartFromPartitionIds) {
  auto channel = Parse("HloModule m",
                       "all-reduce(%x), channel_id=5, replica_groups={{0,1}}, to_apply=%sum");
  EXPECT_TRUE(CollectivesNameReplicas(*channel));
  auto global = Parse("HloModule m",
                      "all-reduce(%x), channel_id=5, replica_groups={{0,1}}, "
                      "use_global_device_ids=true, to_apply=%sum");
  EXPECT_FALSE(CollectivesNameReplicas(*global));
  auto a2a = Parse("HloModule m", "all-to-all(%x), channel_id=1, replica_groups={{0,1}}, dimensions={0}");
  EXPECT_FALSE(CollectivesNameReplicas(*a2a));
}

}  // namespace
}  // namespace sharc::hlo
