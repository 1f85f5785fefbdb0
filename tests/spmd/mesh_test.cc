#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spmd/mesh.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::sharc::testing::StatusIs;
using ::testing::HasSubstr;

hlo::Sharding S(const std::string& text) { return *hlo::ParseSharding(text); }

TEST(MeshTest, ParsesAndPrints) {
  ASSERT_OK_AND_ASSIGN(Mesh mesh, Mesh::Parse("x=2,y=4"));
  EXPECT_EQ(mesh.num_devices(), 8);
  EXPECT_EQ(mesh.ToString(), "{x=2, y=4}");
  ASSERT_OK_AND_ASSIGN(Mesh braces, Mesh::Parse("{x=2, y=4}"));
  EXPECT_EQ(braces, mesh);
}

TEST(MeshTest, RejectsBadMeshes) {
  EXPECT_THAT(Mesh::Parse("x=2,x=2"), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("duplicate mesh axis name \"x\"")));
  EXPECT_THAT(Mesh::Parse("x=0"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has size 0")));
  EXPECT_THAT(Mesh::Parse("x"), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("must be written name=size")));
  EXPECT_THAT(Mesh::Create({{"x", 2}}, {0, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("permutation")));
}

// Found by tests/fuzz/mesh_parser_fuzzer.cc: "x=1073741824" passed the old
// 2^30 bound and allocated (then sorted) 8 GiB of device ids. Meshes stop
// at hlo::kMaxDevices, as the HLO header's mesh and num_partitions do.
TEST(MeshTest, RefusesMoreDevicesThanAnyModuleMayUse) {
  ASSERT_OK_AND_ASSIGN(Mesh largest, Mesh::Parse("x=1024,y=1024"));
  EXPECT_EQ(largest.num_devices(), 1 << 20);
  EXPECT_THAT(Mesh::Parse("x=1024,y=1025"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("mesh has more than 1048576 devices")));
  EXPECT_THAT(Mesh::Parse("x=1073741824"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than")));
}

TEST(PartitionSpecTest, ParsesJaxStyle) {
  ASSERT_OK_AND_ASSIGN(PartitionSpec spec, PartitionSpec::Parse("P((x,y), None)"));
  EXPECT_EQ(spec.ToString(), "P((x,y), None)");
  ASSERT_OK_AND_ASSIGN(PartitionSpec empty, PartitionSpec::Parse("P()"));
  EXPECT_EQ(empty.rank(), 0);
}

// Found by tests/fuzz/partition_spec_fuzzer.cc: P((None)) read as a group of
// one axis named None, which prints as P(None), "not split".
TEST(PartitionSpecTest, RefusesNoneInsideAGroup) {
  for (const char* text : {"P((None))", "P((x, _))", "P(x, (None,y))"}) {
    EXPECT_THAT(PartitionSpec::Parse(text),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("cannot be in a grouped axis list of P(...)")))
        << text;
  }
}

TEST(PartitionSpecTest, ConvertsToXlaShardings) {
  ASSERT_OK_AND_ASSIGN(Mesh mesh, Mesh::Parse("x=2,y=2"));
  auto to = [&](const std::string& spec, int64_t rank) {
    return *ToSharding(mesh, *PartitionSpec::Parse(spec), rank);
  };
  EXPECT_EQ(to("P(x, None)", 2), S("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"));
  EXPECT_EQ(to("P(None, x)", 2), S("{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}"));
  EXPECT_EQ(to("P(y, x)", 2), S("{devices=[2,2]0,2,1,3}"));
  EXPECT_EQ(to("P(y)", 2), S("{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"));
  EXPECT_EQ(to("P((x,y))", 1), S("{devices=[4]0,1,2,3}"));
  EXPECT_EQ(to("P()", 2), S("{replicated}"));
}

TEST(PartitionSpecTest, RoundTripsThroughShardings) {
  ASSERT_OK_AND_ASSIGN(Mesh mesh, Mesh::Parse("x=2,y=2,z=2"));
  for (const char* text : {"P(x, None)", "P(y, x)", "P((x,z), y)", "P(None, (z,y))"}) {
    ASSERT_OK_AND_ASSIGN(PartitionSpec spec, PartitionSpec::Parse(text));
    ASSERT_OK_AND_ASSIGN(hlo::Sharding sharding, ToSharding(mesh, spec, 2));
    ASSERT_OK_AND_ASSIGN(PartitionSpec back, ToPartitionSpec(mesh, sharding, 2));
    ASSERT_OK_AND_ASSIGN(hlo::Sharding again, ToSharding(mesh, back, 2));
    EXPECT_EQ(again, sharding) << text << " came back as " << back.ToString();
  }
}

TEST(PartitionSpecTest, ErrorsNameTheAxis) {
  ASSERT_OK_AND_ASSIGN(Mesh mesh, Mesh::Parse("x=2,y=2"));
  EXPECT_THAT(ToSharding(mesh, *PartitionSpec::Parse("P(z)"), 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown mesh axis \"z\" in P(z) (mesh axes: x, y)")));
  EXPECT_THAT(ToSharding(mesh, *PartitionSpec::Parse("P(x, x)"), 2),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("used twice")));
  EXPECT_THAT(ToSharding(mesh, *PartitionSpec::Parse("P(x, y)"), 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has 2 entries but")));
}

}  // namespace
}  // namespace sharc::spmd
