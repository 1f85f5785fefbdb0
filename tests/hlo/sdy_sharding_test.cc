// Shardy's shardings as JAX writes them into HLO text, read
// (hlo/text/parse_sdy.h) and turned into XLA shardings
// (hlo/ir/sdy_sharding.h). Each expected sharding is worked out by hand from
// the mesh's device numbering (device = row-major index over the mesh axes)
// and written as an explicit device list; Sharding compares by meaning.
#include "hlo/ir/sdy_sharding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/base/status_macros.h"
#include "hlo/text/frontend_attributes.h"
#include "hlo/text/parse_sdy.h"
#include "hlo/text/parser.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::ElementsAre;
using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;

SdyMesh Mesh(const std::string& text) {
  auto meshes = ParseSdyMeshes("{m = #sdy.mesh<" + text + ">}");
  EXPECT_THAT(meshes, IsOk());
  return meshes->at("m");
}

// The XLA sharding of Shardy sharding `sdy` (one value) over `mesh`.
absl::StatusOr<Sharding> Convert(const std::string& mesh, const std::string& sdy,
                                 std::vector<std::string> manual_axes = {}) {
  ASSIGN_OR_RETURN(std::vector<SdyTensorSharding> shardings, ParseSdyShardings(sdy));
  if (shardings.size() != 1) return absl::InvalidArgumentError("not one sharding");
  return SdyToHloSharding(shardings[0], Mesh(mesh), manual_axes);
}

Sharding Hlo(const std::string& text) {
  auto sharding = ParseSharding(text);
  EXPECT_THAT(sharding, IsOk()) << text;
  return *sharding;
}

// Mesh ["a"=2, "b"=4] below: device = a * 4 + b.
TEST(SdyShardingTest, AxesSplittingDimsComeFirstInTheirOrder) {
  SdyMesh mesh = Mesh(R"(["a"=2, "b"=4])");
  EXPECT_EQ(mesh.num_devices(), 8);
  // dim 0 split by b (4 ways), dim 1 by a (2 ways): tile (i, j) is device j * 4 + i.
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b"}, {"a"}]>)"));
  EXPECT_EQ(s, Hlo("{devices=[4,2]0,4,1,5,2,6,3,7}"));
  // Both axes on dim 1, b major: tile k = b * 2 + a.
  ASSERT_OK_AND_ASSIGN(s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{}, {"b", "a"}]>)"));
  EXPECT_EQ(s, Hlo("{devices=[1,8]0,4,1,5,2,6,3,7}"));
}

TEST(SdyShardingTest, UnusedAxesFormTheReplicationGroup) {
  // Only a splits dim 1: devices that differ in b hold the same tile.
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{}, {"a"}], replicated={"b"}>)"));
  EXPECT_EQ(s, Hlo("{devices=[1,2,4]0,1,2,3,4,5,6,7 last_tile_dim_replicate}"));
  ASSERT_OK_AND_ASSIGN(s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{}, {}]>)"));
  EXPECT_TRUE(s.IsReplicated());
}

TEST(SdyShardingTest, SubAxesCutTheirAxisMajorFirst) {
  // "b":(1)2 is b's major half (b / 2), "b":(2)2 its minor half (b % 2).
  // dim 0 by (1)2, dim 1 by a; (2)2 replicates: tile (i, j) holds
  // devices j * 4 + i * 2 + {0, 1}.
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b":(1)2}, {"a"}]>)"));
  EXPECT_EQ(s, Hlo("{devices=[2,2,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate}"));
  ASSERT_OK_AND_ASSIGN(s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b":(2)2}, {}]>)"));
  EXPECT_EQ(s, Hlo("{devices=[2,1,4]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"));
}

TEST(SdyShardingTest, DeviceIdsRenumberTheMesh) {
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert(R"(["a"=2, "b"=2], device_ids=[3,1,2,0])", R"(#sdy.sharding<@m, [{"b"}, {"a"}]>)"));
  // Mesh position (a, b) is device_ids[a * 2 + b]; tile (i, j) is position (j, i).
  EXPECT_EQ(s, Hlo("{devices=[2,2]3,2,1,0}"));
}

TEST(SdyShardingTest, ManualAxesFormAManualSubgroup) {
  // Inside a shard_map manual over a: dim 0 split by b, a manual.
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b"}]>)", {"a"}));
  EXPECT_EQ(s, Hlo("{devices=[4,2]0,4,1,5,2,6,3,7 last_tile_dims={manual}}"));
  ASSERT_OK_AND_ASSIGN(s, Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{}]>)", {"a", "b"}));
  EXPECT_TRUE(s.IsManual());
  EXPECT_THAT(Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"a"}]>)", {"a"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("manual")));
}

TEST(SdyShardingTest, MeshesWithoutAxes) {
  ASSERT_OK_AND_ASSIGN(Sharding s, Convert("[], device_ids=[5]", "#sdy.sharding<@m, []>"));
  EXPECT_EQ(s, Sharding::Maximal(5));
  ASSERT_OK_AND_ASSIGN(s, Convert("[]", "#sdy.sharding<@m, [{}]>"));
  EXPECT_TRUE(s.IsReplicated());
}

TEST(SdyShardingTest, EraseAxesDropsAShardMapsManualAxes) {
  ASSERT_OK_AND_ASSIGN(std::vector<SdyTensorSharding> parsed,
                             ParseSdyShardings(R"(#sdy.sharding<@m, [{"a", "b"}, {}], replicated={"c"}>)"));
  SdyTensorSharding erased = EraseAxes(parsed[0], {"a", "c"});
  ASSERT_EQ(erased.dims[0].axes.size(), 1u);
  EXPECT_EQ(erased.dims[0].axes[0].name, "b");
  EXPECT_TRUE(erased.replicated.empty());
}

TEST(SdyShardingTest, BadShardingsAreRefusedByName) {
  EXPECT_THAT(Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"c"}]>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"c\", which the mesh does not have")));
  EXPECT_THAT(Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"a"}, {"a"}]>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("used twice")));
  EXPECT_THAT(Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b":(3)2}]>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not divide")));
  EXPECT_THAT(Convert(R"(["a"=2, "b"=4])", R"(#sdy.sharding<@m, [{"b":(1)4}, {"b":(2)2}]>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overlap")));
}

TEST(ParseSdyTest, ReadsEveryPartOfASharding) {
  ASSERT_OK_AND_ASSIGN(
      std::vector<SdyTensorSharding> parsed,
      ParseSdyShardings(R"(#sdy.sharding_per_value<[<@mesh, [{"x", ?}p1, {?}, {"y":(2)4}], replicated={"z"}, unreduced={"w"}>, <mesh<["q"=2]>, []>]>)"));
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].mesh_name, "mesh");
  ASSERT_EQ(parsed[0].dims.size(), 3u);
  EXPECT_TRUE(parsed[0].dims[0].open);
  EXPECT_EQ(parsed[0].dims[0].axes.size(), 1u);
  EXPECT_TRUE(parsed[0].dims[1].open);
  EXPECT_TRUE(parsed[0].dims[2].axes[0].sub_axis);
  EXPECT_EQ(parsed[0].dims[2].axes[0].pre_size, 2);
  EXPECT_EQ(parsed[0].dims[2].axes[0].size, 4);
  EXPECT_EQ(parsed[0].replicated[0].name, "z");
  EXPECT_EQ(parsed[0].unreduced[0].name, "w");
  ASSERT_TRUE(parsed[1].inline_mesh.has_value());
  EXPECT_EQ(parsed[1].inline_mesh->num_devices(), 2);
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> manual,
                             ParseSdyManualAxes(R"(#sdy<manual_axes{"x", "y"}>)"));
  EXPECT_THAT(manual, ElementsAre("x", "y"));
}

TEST(ParseSdyTest, ErrorsSayWhereTheTextGoesWrong) {
  EXPECT_THAT(ParseSdyShardings(R"(#sdy.sharding<@m, [{"x"]>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected '}' at character 24")));
  EXPECT_THAT(ParseSdyMeshes(R"({m = #sdy.mesh<["x"=2, "x"=2]>})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("axis \"x\" twice")));
  EXPECT_THAT(ParseSdyManualAxes(R"(#sdy<manual_axes{"x":(1)2}>)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("whole axis")));
}

TEST(FrontendAttributesTest, ReadsStringsAndBracedValues) {
  ASSERT_OK_AND_ASSIGN(
      FrontendAttributes attributes,
      ParseFrontendAttributes(R"({xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>",inlineable="false", xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}})"));
  EXPECT_THAT(attributes, ElementsAre(Pair("xla.sdy.manual_axes", R"(#sdy<manual_axes{"x"}>)"),
                                      Pair("inlineable", "false"),
                                      Pair("xla.sdy.meshes", R"({mesh = #sdy.mesh<["x"=8]>})")));
  EXPECT_EQ(FindFrontendAttribute(attributes, "inlineable"), "false");
  EXPECT_FALSE(FindFrontendAttribute(attributes, "missing").has_value());
  EXPECT_THAT(ParseFrontendAttributes(R"({a="x" b="y"})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected ','")));
}

}  // namespace
}  // namespace sharc::hlo
