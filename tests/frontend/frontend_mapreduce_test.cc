// The MapReduce blocks through the C++ API: the DrJAX/FAX facts (values,
// blocks visible in the traced program, shard shapes), the three lowerings
// giving the same numbers on a mesh, FAX's names, and misuse errors that
// name the user's line.
#include "frontend/mapreduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spmd/propagation.h"
#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Ramp;
using ::sharc::frontend::testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace mr = ::sharc::frontend::mapreduce;

spmd::Mesh MeshOf(const char* text) { return *spmd::Mesh::Parse(text); }

// The tutorial's loss of one group: half the squared error of a linear model.
Tensor Loss(Tensor w, Tensor y) {
  Tensor r = sum(w * y) - 1.0f;
  return r * r * 0.5f;
}

TEST(MapReduceApiTest, BroadcastDoubleAndSumShowsItsBlocks) {
  mr::Program clients("clients", 3);
  Jitted f = jit(clients.wrap([](Tensor x) {
    return mr::reduce_sum(mr::map_fn([](Tensor v) { return v * 2.0f; }, mr::broadcast(x)));
  }));
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({2}, {1, -3})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(6, -18));
  ASSERT_OK_AND_ASSIGN(auto module, f.Trace(ShapeTree::list({hlo::Shape(f32, {2})})));
  const std::string text = module->ToString();
  EXPECT_THAT(text, HasSubstr("f32[3,2] mapreduce.broadcast("));
  EXPECT_THAT(text, HasSubstr("f32[3,2] mapreduce.map("));
  EXPECT_THAT(text, HasSubstr("f32[2] mapreduce.sum("));
  EXPECT_THAT(text, HasSubstr("placement=clients"));
}

TEST(MapReduceApiTest, TutorialLossOnEveryLoweringAndMesh) {
  const hlo::Literal model = F32({2}, {2, -1});
  const hlo::Literal data = F32({3, 2}, {1, 2, 3, -4, -7, 6});
  mr::Program clients("clients", 3);
  auto program = clients.wrap([](Tensor w, Tensor data) {
    return mr::reduce_mean(mr::map_fn(Loss, Tree::list({mr::broadcast(w), data})).leaf());
  });
  for (spmd::MapReduceMode mode : {spmd::MapReduceMode::kAnnotated,
                                   spmd::MapReduceMode::kNoSharding, spmd::MapReduceMode::kLoop}) {
    for (const char* mesh : {"clients=1", "clients=3"}) {
      SCOPED_TRACE(absl::StrCat(spmd::MapReduceModeName(mode), " on ", mesh));
      JitOptions options;
      options.mesh = MeshOf(mesh);
      options.mapreduce_mode = mode;
      ASSERT_OK_AND_ASSIGN(HostTree out, jit(program, options)(HostTree::list({model, data})));
      EXPECT_THAT(Values(out.leaf()), ElementsAre(DoubleNear(87.16667, 1e-4)));
    }
  }
}

// DrJAX's runs_temp_sens_example: the fraction of readings above the median.
TEST(MapReduceApiTest, TemperatureSensorsGiveOneHalf) {
  mr::Program clients("clients", 100);
  Jitted f = jit(clients.wrap([](Tensor readings, Tensor threshold) {
    Tree both = Tree::list({mr::broadcast(threshold), readings});
    Tensor above = mr::map_fn(
                       [](Tensor t, Tensor m) { return where(m > t, ones_like(m), zeros_like(m)); },
                       both)
                       .leaf();
    return mr::reduce_mean(above);
  }));
  ASSERT_OK_AND_ASSIGN(HostTree out,
                       f(Ramp({100}), hlo::Literal::Scalar<float>(49.5f)));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(0.5));
}

TEST(MapReduceApiTest, ClosedOverValuesEnterTheMapBroadcast) {
  mr::Program clients("clients", 4);
  Jitted f = jit(clients.wrap([](Tensor x, Tensor scale) {
    // `scale` is read inside the body without being passed: each group sees it.
    return mr::reduce_sum(mr::map_fn([&](Tensor v) { return v * scale; }, mr::broadcast(x)));
  }));
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({2}, {1, 2}), F32({2}, {10, 100})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(40, 800));
}

TEST(MapReduceApiTest, StructuresAreHandledLeafByLeaf) {
  mr::Program clients("clients", 2);
  Jitted f = jit(clients.wrap([](const Tree& params) -> Tree {
    Tree placed = mr::broadcast(params);
    Tree bumped = mr::map_fn(
        [](const Tree& p) -> Tree {
          return Tree::dict({{"b", Tree(p["b"].leaf() + 1.0f)}, {"w", Tree(p["w"].leaf() * 3.0f)}});
        },
        placed);
    return mr::reduce_mean(bumped);
  }));
  HostTree params = HostTree::dict({{"b", HostTree(F32({1}, {1}))}, {"w", HostTree(F32({2}, {1, 2}))}});
  ASSERT_OK_AND_ASSIGN(HostTree out, f(params));
  EXPECT_THAT(Values(out["b"].leaf()), ElementsAre(2));
  EXPECT_THAT(Values(out["w"].leaf()), ElementsAre(3, 6));
}

TEST(MapReduceApiTest, WeightedMeanIsAComposite) {
  mr::Program clients("clients", 3);
  Jitted f = jit(clients.wrap([](Tensor x, Tensor w) {
    return mr::reduce_weighted_mean(Tree(x), w).leaf();
  }));
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({3, 2}, {1, 10, 2, 20, 3, 30}), F32({3}, {1, 1, 2})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(DoubleNear(2.25, 1e-6), DoubleNear(22.5, 1e-5)));
  ASSERT_OK_AND_ASSIGN(auto module,
                       f.Trace(ShapeTree::list({hlo::Shape(f32, {3, 2}), hlo::Shape(f32, {3})})));
  // Two sums, as DrJAX's jaxpr shows: the weighted values and the weights.
  const std::string text = module->ToString();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') > 0, true);
  size_t sums = 0;
  for (size_t at = text.find("mapreduce.sum("); at != std::string::npos;
       at = text.find("mapreduce.sum(", at + 1)) {
    ++sums;
  }
  EXPECT_EQ(sums, 2u);
}

TEST(MapReduceApiTest, FaxNamesAreTheSameBlocks) {
  mr::Program clients = mr::federated_program(3);
  Jitted f = jit(clients.wrap([](const Tree& model) -> Tree {
    Tree at_clients = mr::federated_broadcast(model);
    Tree squared = mr::federated_map([](Tensor v) { return v * v; }, Tree::list({at_clients}));
    Tree server = mr::federated_map_server([](Tensor v) { return v + 1.0f; },
                                           Tree::list({mr::federated_mean(squared)}));
    return server;
  }));
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({2}, {2, 3})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(5, 10));
}

// DrJAX's impls_sharding_test: 100 clients on a {clients=2, data=2} mesh; the
// broadcast result is split along clients, and keeps the argument's data split.
TEST(MapReduceApiTest, ShardShapesOnATwoByTwoMesh) {
  for (bool data_sharded : {false, true}) {
    SCOPED_TRACE(data_sharded ? "argument P(data)" : "argument replicated");
    mr::Program clients("clients", 100);
    JitOptions options;
    options.mesh = MeshOf("clients=2,data=2");
    if (data_sharded) options.in_shardings = SpecTree::list({SpecTree(spmd::PartitionSpec({{"data"}}))});
    Jitted f = jit(clients.wrap([](Tensor x) { return mr::broadcast(x); }), options);
    ASSERT_OK_AND_ASSIGN(auto module, f.Trace(ShapeTree::list({hlo::Shape(f32, {10})})));
    ASSERT_OK(spmd::LowerMapReduce(*module, spmd::MapReduceMode::kAnnotated));
    ASSERT_OK(spmd::PropagateShardings(*module).status());
    const hlo::Instruction* root = module->entry()->root();
    const hlo::Instruction* placed = root->opcode() == hlo::Opcode::kTuple ? root->operand(0) : root;
    ASSERT_TRUE(placed->has_sharding()) << module->ToString();
    EXPECT_EQ(placed->sharding()->ShardShape(placed->shape()).dims(),
              (std::vector<int64_t>{50, data_sharded ? 5 : 10}))
        << module->ToString();
    // And the values: 100 copies.
    ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})));
    EXPECT_EQ(out.leaf().shape().dims(), (std::vector<int64_t>{100, 10}));
    EXPECT_EQ(out.leaf().GetAsDouble(99 * 10 + 7), 7);
  }
}

// --- misuse ----------------------------------------------------------------

TEST(MapReduceErrorsTest, BlockOutsideAProgram) {
  Jitted f = jit([](Tensor x) { return mr::broadcast(x); });
  const int line = __LINE__ - 1;
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("only defined inside a mapreduce::Program"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(absl::StrCat("frontend_mapreduce_test.cc:", line)));
}

TEST(MapReduceErrorsTest, PlacedValueWhereANonPlacedOneIsExpected) {
  mr::Program clients("clients", 3);
  Jitted f = jit(clients.wrap([](Tensor x) { return mr::broadcast(mr::broadcast(x)); }));
  const int line = __LINE__ - 1;
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("broadcast expects a non-partitioned value"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(absl::StrCat("frontend_mapreduce_test.cc:", line)));
}

TEST(MapReduceErrorsTest, NonPlacedValueWhereAPlacedOneIsExpected) {
  mr::Program clients("clients", 3);
  Jitted f = jit(clients.wrap([](Tensor x) { return mr::reduce_sum(x); }));
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("reduce_sum expects values placed at 'clients' (a leading dimension of 3 "
                        "groups); leaf 0 is f32[2], a non-partitioned value"));
}

TEST(MapReduceErrorsTest, PlacementWithNoMeshAxis) {
  mr::Program clients("clients", 4);
  JitOptions options;
  options.mesh = MeshOf("data=2");
  Jitted f = jit(clients.wrap([](Tensor x) { return mr::broadcast(x); }), options);
  const int line = __LINE__ - 1;
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("which is not an axis of the mesh {data=2}"));
  EXPECT_THAT(std::string(out.status().message()), HasSubstr(absl::StrCat("frontend_mapreduce_test.cc:", line)));
}

TEST(MapReduceErrorsTest, GroupsNotDivisibleByTheMeshAxis) {
  mr::Program clients("clients", 3);
  JitOptions options;
  options.mesh = MeshOf("clients=2");
  Jitted f = jit(clients.wrap([](Tensor x) { return mr::reduce_sum(mr::broadcast(x)); }), options);
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("spreads 3 groups over mesh axis 'clients' of size 2"));
}

TEST(MapReduceErrorsTest, BlocksInsideAMapBodyDoNotNest) {
  mr::Program clients("clients", 2);
  Jitted f = jit(clients.wrap([](Tensor x) {
    return mr::map_fn([](Tensor v) { return mr::reduce_sum(mr::broadcast(v)); }, mr::broadcast(x));
  }));
  absl::StatusOr<HostTree> out = f(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("placements do not nest"));
}

}  // namespace
}  // namespace sharc::frontend
