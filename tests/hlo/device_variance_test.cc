// The device-variance algebra (hlo/ops/device_variance.h) that spmd's
// variance pass and autodiff's BodyVariance both type programs with.
#include "hlo/ops/device_variance.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ManualMesh kMesh({{"x", 2}, {"y", 2}, {"z", 2}});

TEST(DeviceVarianceTest, SetsKeepTheMeshOrder) {
  EXPECT_THAT(UnionAxes(kMesh, {"z"}, {"x"}), ElementsAre("x", "z"));
  EXPECT_THAT(UnionAxes(kMesh, {"y", "w"}, {}), ElementsAre("y"));  // not in the mesh: dropped
  EXPECT_THAT(MinusAxes({"x", "y", "z"}, {"y"}), ElementsAre("x", "z"));
  EXPECT_THAT(AllAxes(kMesh), ElementsAre("x", "y", "z"));
}

TEST(DeviceVarianceTest, CollectivesFollowTheirEffect) {
  const NamedCollectiveInfo* psum = FindNamedCollective(Opcode::kPSum);
  const NamedCollectiveInfo* pbroadcast = FindNamedCollective(Opcode::kPBroadcast);
  const NamedCollectiveInfo* all_gather = FindNamedCollective(Opcode::kNamedAllGather);
  const NamedCollectiveInfo* axis_index = FindNamedCollective(Opcode::kAxisIndex);
  ASSERT_NE(psum, nullptr);
  ASSERT_NE(pbroadcast, nullptr);
  ASSERT_NE(all_gather, nullptr);
  ASSERT_NE(axis_index, nullptr);
  EXPECT_THAT(CollectiveVariance(*psum, kMesh, {"x", "y"}, {"y"}), ElementsAre("x"));
  EXPECT_THAT(CollectiveVariance(*pbroadcast, kMesh, {"z"}, {"x"}), ElementsAre("x", "z"));
  EXPECT_THAT(CollectiveVariance(*all_gather, kMesh, {"y"}, {"y"}), ElementsAre("y"));
  EXPECT_THAT(CollectiveVariance(*axis_index, kMesh, {}, {"z", "x"}), ElementsAre("x", "z"));
}

TEST(DeviceVarianceTest, OwnVarianceComesFromPartitionIdAndCalledComputations) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(R"(
HloModule m, mesh={x=2,y=2,z=2}
%plain { %a = s32[] parameter(0)  %b = s32[] parameter(1)  ROOT %s = s32[] add(%a, %b) }
%indexed {
  %a = s32[] parameter(0)  %b = s32[] parameter(1)
  %k = s32[] axis_index(), axes={y}
  %s = s32[] add(%a, %b)
  ROOT %t = s32[] add(%s, %k)
}
ENTRY %e {
  %v = s32[4] parameter(0)
  %zero = s32[] constant(0)
  %p = u32[] partition-id()
  %r1 = s32[] reduce(%v, %zero), dimensions={0}, to_apply=%plain
  ROOT %r2 = s32[] reduce(%v, %zero), dimensions={0}, to_apply=%indexed
}
)"));
  auto own = [&](const std::string& name) {
    for (const Instruction* inst : module->entry()->instructions()) {
      if (inst->name() == name) return OwnVariance(*inst, kMesh);
    }
    ADD_FAILURE() << "no " << name;
    return VarianceAxes{};
  };
  EXPECT_THAT(own("p"), ElementsAre("x", "y", "z"));
  EXPECT_THAT(own("r1"), IsEmpty());
  EXPECT_THAT(own("r2"), ElementsAre("y"));
  EXPECT_THAT(own("v"), IsEmpty());
}

}  // namespace
}  // namespace sharc::hlo
