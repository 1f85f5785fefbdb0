// The MapReduce blocks through .hlo text: their reference semantics (the
// interpreter), the three lowerings, the shardings DrJAX's tests pin (100
// clients on a 2x2 mesh), partitioned runs, and the bad-input errors.
#include "spmd/mapreduce_lowering.h"

#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/mesh.h"
#include "spmd/propagation.h"
#include "tests/spmd/propagation_test_util.h"
#include "driver/spmd_runner.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;
using hlo::Literal;
using testing_util::FindInstruction;

// DrJAX's broadcast_double_and_sum with 3 groups: returns 6x.
constexpr char kDoubleAndSum[] = R"(HloModule double_and_sum, mesh={clients=3}
%double {
  %x = f32[2] parameter(0)
  %two = f32[] constant(2)
  %twos = f32[2] broadcast(%two), dimensions={}
  ROOT %y = f32[2] multiply(%x, %twos)
}
ENTRY %e {
  %x = f32[2] parameter(0)
  %bx = f32[3,2] mapreduce.broadcast(%x), placement=clients
  %d = f32[3,2] mapreduce.map(%bx), placement=clients, to_apply=%double
  ROOT %s = f32[2] mapreduce.sum(%d), placement=clients
})";

// The DrJAX/FAX tutorial: broadcast the model, a squared-error loss per
// group, the mean over groups.
constexpr char kTutorialLoss[] = R"(HloModule tutorial, mesh={clients=3}
%loss {
  %w = f32[2] parameter(0)
  %y = f32[2] parameter(1)
  %d = f32[] dot(%w, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %one = f32[] constant(1)
  %r = f32[] subtract(%d, %one)
  %sq = f32[] multiply(%r, %r)
  %half = f32[] constant(0.5)
  ROOT %l = f32[] multiply(%sq, %half)
}
ENTRY %e {
  %w = f32[2] parameter(0)
  %data = f32[3,2] parameter(1)
  %bw = f32[3,2] mapreduce.broadcast(%w), placement=clients
  %l = f32[3] mapreduce.map(%bw, %data), placement=clients, to_apply=%loss
  ROOT %m = f32[] mapreduce.mean(%l), placement=clients
})";

// DrJAX's temperature-sensors example: the fraction of 100 readings above a
// broadcast threshold.
constexpr char kTemperatureSensors[] = R"(HloModule sensors, mesh={clients=4}
%above {
  %t = f32[] parameter(0)
  %m = f32[] parameter(1)
  %gt = pred[] compare(%m, %t), direction=GT
  %one = f32[] constant(1)
  %zero = f32[] constant(0)
  ROOT %s = f32[] select(%gt, %one, %zero)
}
ENTRY %e {
  %threshold = f32[] parameter(0)
  %readings = f32[100] parameter(1), sharding={devices=[4]<=[4]}
  %t = f32[100] mapreduce.broadcast(%threshold), placement=clients
  %a = f32[100] mapreduce.map(%t, %readings), placement=clients, to_apply=%above
  ROOT %mean = f32[] mapreduce.mean(%a), placement=clients
})";

std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  auto module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? std::move(*module) : nullptr;
}

Literal Vector(std::vector<float> values) { return Literal::Vector<float>(values); }

Literal Matrix(int64_t rows, int64_t cols, std::vector<float> values) {
  return Literal::FromValues<float>({rows, cols}, values);
}

Literal Iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return Vector(v);
}

void ExpectNear(const Literal& got, const Literal& want, double tolerance = 1e-5) {
  ASSERT_EQ(got.shape(), want.shape()) << got.ToString() << " vs " << want.ToString();
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    const double g = got.GetAsDouble(i), w = want.GetAsDouble(i);
    EXPECT_NEAR(g, w, tolerance * std::max(1.0, std::abs(w))) << "element " << i;
  }
}

// Lowers a copy of `text` in `mode` and checks it verifies.
std::unique_ptr<hlo::Module> Lowered(const std::string& text, MapReduceMode mode) {
  std::unique_ptr<hlo::Module> module = Parse(text);
  if (!module) return nullptr;
  absl::Status lowered = LowerMapReduce(*module, mode);
  EXPECT_TRUE(lowered.ok()) << lowered;
  if (!lowered.ok()) return nullptr;
  absl::Status verified = hlo::VerifyModule(*module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << module->ToString();
  EXPECT_FALSE(HasMapReduceBlocks(*module));
  return module;
}

const MapReduceMode kModes[] = {MapReduceMode::kAnnotated, MapReduceMode::kNoSharding,
                                MapReduceMode::kLoop};

// The blocks' own semantics, lowered in each mode, and run partitioned over
// the mesh: all give `want`.
void ExpectEverywhere(const std::string& text, const std::vector<Literal>& args,
                      const Literal& want) {
  std::unique_ptr<hlo::Module> global = Parse(text);
  ASSERT_NE(global, nullptr);
  absl::StatusOr<Literal> reference = hlo::Evaluate(*global, args);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ExpectNear(*reference, want);
  for (MapReduceMode mode : kModes) {
    SCOPED_TRACE(MapReduceModeName(mode));
    std::unique_ptr<hlo::Module> lowered = Lowered(text, mode);
    ASSERT_NE(lowered, nullptr);
    absl::StatusOr<Literal> one_device = hlo::Evaluate(*lowered, args);
    ASSERT_TRUE(one_device.ok()) << one_device.status();
    ExpectNear(*one_device, want);
    const int64_t devices = lowered->config().num_partitions;
    absl::StatusOr<Literal> partitioned = driver::RunPartitioned(*lowered, args, devices);
    ASSERT_TRUE(partitioned.ok()) << partitioned.status() << "\n" << lowered->ToString();
    ExpectNear(*partitioned, want);
  }
}

TEST(MapReduceBlocksTest, BroadcastDoubleAndSumGivesSixTimes) {
  ExpectEverywhere(kDoubleAndSum, {Vector({1, -2})}, Vector({6, -12}));
}

TEST(MapReduceBlocksTest, TutorialLossIs87Point16667) {
  ExpectEverywhere(kTutorialLoss, {Vector({2, -1}), Matrix(3, 2, {1, 2, 3, -4, -7, 6})},
                   Literal::Scalar<float>(87.16667f));
}

TEST(MapReduceBlocksTest, TemperatureSensorsFractionAboveThreshold) {
  ExpectEverywhere(kTemperatureSensors, {Literal::Scalar<float>(24), Iota(100)},
                   Literal::Scalar<float>(0.75f));
}

TEST(MapReduceBlocksTest, MeshHeaderImpliesTheDeviceCount) {
  std::unique_ptr<hlo::Module> module = Parse(kDoubleAndSum);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->config().num_partitions, 3);
  auto mismatch = hlo::ParseAndVerifyModule(
      absl::StrReplaceAll(kDoubleAndSum, {{"mesh={clients=3}", "num_partitions=2, mesh={clients=3}"}}));
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(), HasSubstr("the mesh has 3 devices but num_partitions=2"));
}

TEST(MapReduceBlocksTest, OneDeviceNeedsNoConstraintsWhateverTheHeaderMesh) {
  std::unique_ptr<hlo::Module> module = Parse(kDoubleAndSum);
  ASSERT_NE(module, nullptr);
  module->mutable_config().num_partitions = 1;
  ASSERT_TRUE(LowerMapReduce(*module, MapReduceMode::kAnnotated).ok());
  EXPECT_THAT(module->ToString(), ::testing::Not(HasSubstr("custom-call")));
}

TEST(MapReduceBlocksTest, ModesDifferInConstraintsAndLoops) {
  std::unique_ptr<hlo::Module> annotated = Lowered(kDoubleAndSum, MapReduceMode::kAnnotated);
  std::unique_ptr<hlo::Module> ns = Lowered(kDoubleAndSum, MapReduceMode::kNoSharding);
  std::unique_ptr<hlo::Module> loop = Lowered(kDoubleAndSum, MapReduceMode::kLoop);
  ASSERT_TRUE(annotated && ns && loop);
  const std::string a = annotated->ToString(), n = ns->ToString(), l = loop->ToString();
  // Annotated: the broadcast result and the map's input and output are
  // constrained to P(clients) with the other dims open.
  EXPECT_THAT(a, HasSubstr("custom_call_target=\"Sharding\", "
                           "backend_config=\"unspecified_dims=[1]\", sharding={devices=[3,1]0,1,2}"));
  EXPECT_THAT(a, HasSubstr("%bx = f32[3,2] custom-call(%bx.broadcast)"));
  EXPECT_THAT(n, ::testing::Not(HasSubstr("custom-call")));
  EXPECT_THAT(n, HasSubstr("%bx = f32[3,2] broadcast(%x), dimensions={1}"));
  EXPECT_THAT(n, HasSubstr("to_apply=%double.vectorised"));
  // The loop calls the original body once per group and stacks the results.
  EXPECT_THAT(l, HasSubstr("%d.g2 = f32[2] call(%d.g2.in0), to_apply=%double"));
  EXPECT_THAT(l, HasSubstr("%d = f32[3,2] concatenate(%d.g0.out0, %d.g1.out0, %d.g2.out0)"));
  EXPECT_THAT(l, ::testing::Not(HasSubstr("vectorised")));
  // Sum and mean are reduces over the group dimension.
  EXPECT_THAT(n, HasSubstr("%s = f32[2] reduce(%d, %s.zero), dimensions={0}, to_apply=%sharc.add.f32"));
}

// DrJAX's impls_sharding_test: 100 clients on a {clients=2, data=2} mesh.
class ShardShapeTest : public ::testing::Test {
 protected:
  std::string SpecText(const std::string& spec, int64_t rank) {
    absl::StatusOr<Mesh> mesh = Mesh::Parse("clients=2,data=2");
    EXPECT_TRUE(mesh.ok());
    absl::StatusOr<PartitionSpec> p = PartitionSpec::Parse(spec);
    EXPECT_TRUE(p.ok());
    absl::StatusOr<hlo::Sharding> s = ToSharding(*mesh, *p, rank);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? s->ToString() : "";
  }

  // Lowers (annotated) and propagates; returns the shard shape of `name`.
  std::vector<int64_t> ShardShape(const std::string& text, const std::string& name) {
    std::unique_ptr<hlo::Module> module = Lowered(text, MapReduceMode::kAnnotated);
    if (!module) return {};
    absl::StatusOr<PropagationResult> propagated = PropagateShardings(*module);
    EXPECT_TRUE(propagated.ok()) << propagated.status();
    const hlo::Instruction* inst = FindInstruction(*module, name);
    EXPECT_NE(inst, nullptr);
    if (inst == nullptr) return {};
    // Without a sharding (one device) the value is whole on every device.
    if (!inst->has_sharding()) return inst->shape().dims();
    spec_ = inst->sharding()->ToString();
    return inst->sharding()->ShardShape(inst->shape()).dims();
  }

  std::string spec_;
};

TEST_F(ShardShapeTest, BroadcastShardsAlongClients) {
  const std::string text = R"(HloModule m, mesh={clients=2, data=2}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[100,10] mapreduce.broadcast(%x), placement=clients
})";
  EXPECT_EQ(ShardShape(text, "b"), (std::vector<int64_t>{50, 10}));
}

TEST_F(ShardShapeTest, BroadcastPreservesTheArgumentsDataSharding) {
  const std::string text = absl::StrCat(R"(HloModule m, mesh={clients=2, data=2}
ENTRY %e {
  %x = f32[10] parameter(0), sharding=)", SpecText("P(data)", 1), R"(
  ROOT %b = f32[100,10] mapreduce.broadcast(%x), placement=clients
})");
  EXPECT_EQ(ShardShape(text, "b"), (std::vector<int64_t>{50, 5}));
  EXPECT_EQ(spec_, SpecText("P(clients, data)", 2));
}

TEST_F(ShardShapeTest, MapRespectsClientsSharding) {
  const std::string text = R"(HloModule m, mesh={clients=2, data=2}
%add {
  %a = f32[10] parameter(0)
  %b = f32[10] parameter(1)
  ROOT %s = f32[10] add(%a, %b)
}
ENTRY %e {
  %x = f32[10] parameter(0)
  %y = f32[10] parameter(1)
  %bx = f32[100,10] mapreduce.broadcast(%x), placement=clients
  %by = f32[100,10] mapreduce.broadcast(%y), placement=clients
  ROOT %m = f32[100,10] mapreduce.map(%bx, %by), placement=clients, to_apply=%add
})";
  EXPECT_EQ(ShardShape(text, "m"), (std::vector<int64_t>{50, 10}));
}

TEST_F(ShardShapeTest, MapForcesClientsShardingWithModelParallelism) {
  const std::string text = absl::StrCat(R"(HloModule m, mesh={clients=2, data=2}
%inc {
  %a = f32[10] parameter(0)
  %one = f32[] constant(1)
  %ones = f32[10] broadcast(%one), dimensions={}
  ROOT %s = f32[10] add(%a, %ones)
}
ENTRY %e {
  %x = f32[100,10] parameter(0), sharding=)", SpecText("P(None, data)", 2), R"(
  ROOT %m = f32[100,10] mapreduce.map(%x), placement=clients, to_apply=%inc
})");
  EXPECT_EQ(ShardShape(text, "m"), (std::vector<int64_t>{50, 5}));
  EXPECT_EQ(spec_, SpecText("P(clients, data)", 2));
}

TEST_F(ShardShapeTest, OneByOneMeshReplicates) {
  const std::string text = R"(HloModule m, mesh={clients=1}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[100,10] mapreduce.broadcast(%x), placement=clients
})";
  EXPECT_EQ(ShardShape(text, "b"), (std::vector<int64_t>{100, 10}));
}

// --- bad input -------------------------------------------------------------

absl::Status LowerError(const std::string& text, MapReduceMode mode = MapReduceMode::kAnnotated) {
  auto module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) return module.status();
  return LowerMapReduce(**module, mode);
}

TEST(MapReduceErrorsTest, PlacementWithoutAMeshAxis) {
  absl::Status s = LowerError(R"(HloModule m, mesh={data=2}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[4,10] mapreduce.broadcast(%x), placement=clients
})");
  EXPECT_THAT(s.message(), HasSubstr("places values at 'clients', which is not an axis of the mesh {data=2}"));
  EXPECT_THAT(s.message(), HasSubstr("%b = f32[4,10] mapreduce.broadcast(%x)"));
  EXPECT_THAT(s.message(), HasSubstr("<input>:4:"));  // the block's line
  // NS mode has no constraints to place, so the same module lowers.
  EXPECT_TRUE(LowerError(R"(HloModule m, mesh={data=2}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[4,10] mapreduce.broadcast(%x), placement=clients
})", MapReduceMode::kNoSharding).ok());
}

TEST(MapReduceErrorsTest, GroupsNotDivisibleByTheMeshAxis) {
  absl::Status s = LowerError(R"(HloModule m, mesh={clients=4}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[10,10] mapreduce.broadcast(%x), placement=clients
})");
  EXPECT_THAT(s.message(), HasSubstr("spreads 10 groups over mesh axis 'clients' of size 4"));
}

TEST(MapReduceErrorsTest, InconsistentGroupCounts) {
  absl::Status s = LowerError(R"(HloModule m, mesh={clients=2}
ENTRY %e {
  %x = f32[10] parameter(0)
  %b = f32[4,10] mapreduce.broadcast(%x), placement=clients
  %c = f32[6,10] mapreduce.broadcast(%x), placement=clients
  ROOT %t = (f32[4,10], f32[6,10]) tuple(%b, %c)
})");
  EXPECT_THAT(s.message(), HasSubstr("has 6 groups, but placement 'clients' has 4"));
}

TEST(MapReduceErrorsTest, NonPartitionedValueWhereAPartitionedOneIsExpected) {
  auto module = hlo::ParseAndVerifyModule(R"(HloModule m, mesh={clients=2}
ENTRY %e {
  %x = f32[] parameter(0)
  ROOT %s = f32[] mapreduce.sum(%x), placement=clients
})");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("is the non-partitioned value f32[]"));
}

TEST(MapReduceErrorsTest, BroadcastMustDeclareTheGroupDimension) {
  auto module = hlo::ParseAndVerifyModule(R"(HloModule m, mesh={clients=2}
ENTRY %e {
  %x = f32[10] parameter(0)
  ROOT %b = f32[10] mapreduce.broadcast(%x), placement=clients
})");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("with a leading group dimension"));
}

TEST(MapReduceErrorsTest, MeanOfIntegersAsksForAConvert) {
  auto module = hlo::ParseAndVerifyModule(R"(HloModule m, mesh={clients=2}
ENTRY %e {
  %x = s32[4] parameter(0)
  ROOT %m = s32[] mapreduce.mean(%x), placement=clients
})");
  ASSERT_FALSE(module.ok());
  EXPECT_THAT(module.status().message(), HasSubstr("convert it (e.g. to f32) before taking the mean"));
}

TEST(MapReduceErrorsTest, BlocksDoNotNestInsideMapBodies) {
  absl::Status s = LowerError(R"(HloModule m, mesh={clients=2}
%inner {
  %a = f32[3] parameter(0)
  ROOT %s = f32[] mapreduce.sum(%a), placement=clients
}
ENTRY %e {
  %x = f32[4,3] parameter(0)
  ROOT %m = f32[4] mapreduce.map(%x), placement=clients, to_apply=%inner
})");
  EXPECT_THAT(s.message(), HasSubstr("is inside the body of a mapreduce.map"));
}

TEST(MapReduceErrorsTest, ModeNames) {
  EXPECT_EQ(*ParseMapReduceMode("ns"), MapReduceMode::kNoSharding);
  EXPECT_THAT(ParseMapReduceMode("fast").status().message(),
              HasSubstr("expected annotated, ns or loop"));
}

}  // namespace
}  // namespace sharc::spmd
