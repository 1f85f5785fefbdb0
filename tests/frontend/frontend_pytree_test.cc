// Pytrees: structure, flatten/unflatten round trips, prefix expansion, and
// functions of trees through jit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Values;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using IntTree = PyTree<int>;

IntTree Sample() {
  // {w: [1, 2], b: 3, nested: {z: [], a: 4}}
  return IntTree::dict({{"w", IntTree::list({1, 2})},
                        {"b", 3},
                        {"nested", IntTree::dict({{"z", IntTree::list({})}, {"a", 4}})}});
}

TEST(PyTreeTest, FlattenOrdersDictKeysAndKeepsListOrder) {
  auto [leaves, structure] = Flatten(Sample());
  EXPECT_THAT(leaves, ElementsAre(3, 4, 1, 2));  // b, nested.a, nested.z (none), w
  EXPECT_EQ(structure.ToString(), "{b: *, nested: {a: *, z: []}, w: [*, *]}");
  EXPECT_EQ(structure.num_leaves(), 4);
  EXPECT_THAT(structure.LeafPaths(),
              ElementsAre(".b", ".nested.a", ".w[0]", ".w[1]"));
}

TEST(PyTreeTest, UnflattenRebuildsTheTree) {
  auto [leaves, structure] = Flatten(Sample());
  for (int& leaf : leaves) leaf *= 10;
  ASSERT_OK_AND_ASSIGN(IntTree rebuilt, Unflatten(structure, leaves));
  EXPECT_EQ(StructureOf(rebuilt), structure);
  EXPECT_EQ(rebuilt["w"][1].leaf(), 20);
  EXPECT_EQ(rebuilt["nested"]["a"].leaf(), 40);
  EXPECT_EQ(rebuilt["b"].leaf(), 30);
  EXPECT_THAT(Unflatten(structure, std::vector<int>{1, 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 leaves")));
}

TEST(PyTreeTest, MapTreeKeepsStructure) {
  PyTree<std::string> names = MapTree(Sample(), [](int v) { return std::to_string(v); });
  EXPECT_EQ(StructureOf(names), StructureOf(Sample()));
  EXPECT_EQ(names["w"][0].leaf(), "1");
}

TEST(PyTreeTest, AccessorsOnTheWrongKindThrow) {
  IntTree t = Sample();
  EXPECT_THROW(t.leaf(), std::out_of_range);
  EXPECT_THROW(t["missing"], std::out_of_range);
  EXPECT_THROW(t["w"][2], std::out_of_range);
  EXPECT_THROW(t["w"]["x"], std::out_of_range);
}

TEST(PyTreeTest, ExpandPrefix) {
  TreeStructure full = StructureOf(Sample());
  ASSERT_OK_AND_ASSIGN(std::vector<char> all, ExpandPrefix(PyTree<char>('r'), full));
  EXPECT_THAT(all, ElementsAre('r', 'r', 'r', 'r'));
  PyTree<char> prefix = PyTree<char>::dict(
      {{"b", 'b'}, {"nested", 'n'}, {"w", PyTree<char>::list({'x', 'y'})}});
  ASSERT_OK_AND_ASSIGN(std::vector<char> per_leaf, ExpandPrefix(prefix, full));
  EXPECT_THAT(per_leaf, ElementsAre('b', 'n', 'x', 'y'));
  EXPECT_THAT(ExpandPrefix(PyTree<char>::list({'a'}), full),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a prefix")));
}

TEST(PyTreeTest, JitTakesAndReturnsTrees) {
  Jitted f = jit([](const Tree& params) -> Tree {
    Tensor y = matmul(params["x"].leaf(), params["w"].leaf()) + params["b"].leaf();
    return Tree::dict({{"y", y}, {"stats", Tree::list({sum(y), max(y)})}});
  });
  HostTree args = HostTree::dict({{"x", F32({1, 2}, {1, 2})},
                                  {"w", F32({2, 2}, {1, 0, 0, 1})},
                                  {"b", F32({2}, {10, 20})}});
  ASSERT_OK_AND_ASSIGN(HostTree out, f(args));
  EXPECT_EQ(StructureOf(out).ToString(), "{stats: [*, *], y: *}");
  EXPECT_THAT(Values(out["y"].leaf()), ElementsAre(11, 22));
  EXPECT_THAT(Values(out["stats"][0].leaf()), ElementsAre(33));
  EXPECT_THAT(Values(out["stats"][1].leaf()), ElementsAre(22));
}

TEST(PyTreeTest, ReturningAnInputLeafUnchanged) {
  Jitted f = jit([](const Tree& args) -> Tree { return Tree::list({args[1], args[0]}); });
  ASSERT_OK_AND_ASSIGN(HostTree out,
                       f(HostTree::list({F32({1}, {1}), F32({2}, {2, 3})})));
  EXPECT_THAT(Values(out[0].leaf()), ElementsAre(2, 3));
  EXPECT_THAT(Values(out[1].leaf()), ElementsAre(1));
}

}  // namespace
}  // namespace sharc::frontend
