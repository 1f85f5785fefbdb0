// Collectives on 4 simulated devices in 2 replica groups: every device's
// evaluation gets the other devices' canned contributions from a fake
// context, and results are compared with hand-computed values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/ops/ragged_all_to_all.h"
#include "hlo/text/parser.h"
#include "tests/hlo/ops_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::ops_test::F32;
using ::sharc::hlo::ops_test::FakeEvalContext;
using ::sharc::hlo::ops_test::OpTestModule;
using ::sharc::hlo::ops_test::ToVector;
using ::sharc::hlo::ops_test::Values;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kDevices = 4;

auto Invalid(const char* text) {
  return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(std::string(text)));
}

// Device d contributes [10d, 10d+1, 10d+2, 10d+3].
std::vector<Literal> DeviceValues() {
  std::vector<Literal> values;
  for (int64_t d = 0; d < kDevices; ++d) {
    float b = 10.0f * static_cast<float>(d);
    values.push_back(Values<float>({4}, {b, b + 1, b + 2, b + 3}));
  }
  return values;
}

// Evaluates `inst` as device d for every d, each seeing all DeviceValues().
std::vector<Literal> RunOnAllDevices(OpTestModule& t, const Instruction& inst) {
  std::vector<Literal> values = DeviceValues();
  std::vector<Literal> results;
  for (int64_t d = 0; d < kDevices; ++d) {
    FakeEvalContext ctx(d, kDevices);
    ctx.device_values = values;
    absl::StatusOr<Literal> r = t.Eval(inst, {values[static_cast<size_t>(d)]}, &ctx);
    EXPECT_TRUE(r.ok()) << "device " << d << ": " << r.status();
    EXPECT_EQ(ctx.exchanges, 1);
    results.push_back(r.ok() ? *std::move(r) : Literal());
  }
  return results;
}

class CollectiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t_.module().mutable_config().num_partitions = kDevices;
    add_ = t_.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
    sub_ = t_.BinaryComputation("sub", Opcode::kSubtract, PrimitiveType::kF32);
    x_ = t_.Param(F32({4}));
  }

  OpTestModule t_;
  Computation* add_ = nullptr;
  Computation* sub_ = nullptr;
  Instruction* x_ = nullptr;
  const IntListList kGroups = {{0, 1}, {2, 3}};
};

TEST_F(CollectiveTest, AllCollectivesAreMarked) {
  for (Opcode op : {Opcode::kAllReduce, Opcode::kAllGather, Opcode::kReduceScatter,
                    Opcode::kAllToAll, Opcode::kCollectivePermute}) {
    EXPECT_TRUE(GetOpDef(op).traits.collective) << OpcodeName(op);
  }
}

TEST_F(CollectiveTest, AllReduceWithinGroups) {
  Instruction* ar = t_.AddInferred(Opcode::kAllReduce, {x_},
                                   {{"channel_id", int64_t{1}},
                                    {"replica_groups", kGroups},
                                    {"use_global_device_ids", true},
                                    {"to_apply", add_}});
  EXPECT_EQ(ar->shape(), F32({4}));
  EXPECT_OK(t_.Verify(*ar));
  std::vector<Literal> out = RunOnAllDevices(t_, *ar);
  EXPECT_THAT(ToVector<float>(out[0]), ElementsAre(10, 12, 14, 16));
  EXPECT_EQ(out[1], out[0]);
  EXPECT_THAT(ToVector<float>(out[2]), ElementsAre(50, 52, 54, 56));
  EXPECT_EQ(out[3], out[2]);
}

TEST_F(CollectiveTest, AllReduceCombinesInGroupOrder) {
  // subtract exposes the order: ((first - second)) with members {1,0}.
  Instruction* ar =
      t_.AddInferred(Opcode::kAllReduce, {x_},
                     {{"channel_id", int64_t{1}},
                      {"use_global_device_ids", true},
                      {"replica_groups", IntListList{{1, 0}, {3, 2}}},
                      {"to_apply", sub_}});
  std::vector<Literal> out = RunOnAllDevices(t_, *ar);
  for (int64_t d = 0; d < kDevices; ++d) {
    EXPECT_THAT(ToVector<float>(out[static_cast<size_t>(d)]), ElementsAre(10, 10, 10, 10));
  }
}

TEST_F(CollectiveTest, VariadicAllReduceExchangesOnce) {
  Instruction* y = t_.Param(F32({4}));
  Instruction* ar = t_.AddInferred(Opcode::kAllReduce, {x_, y},
                                   {{"channel_id", int64_t{1}},
                                    {"use_global_device_ids", true},
                                    {"replica_groups", kGroups},
                                    {"to_apply", add_}});
  EXPECT_EQ(ar->shape(), Shape::Tuple({F32({4}), F32({4})}));
  std::vector<Literal> values = DeviceValues();
  std::vector<Literal> packed;
  for (const Literal& v : values) packed.push_back(Literal::Tuple({v, v}));
  FakeEvalContext ctx(3, kDevices);
  ctx.device_values = packed;
  ASSERT_OK_AND_ASSIGN(Literal out, t_.Eval(*ar, {values[3], values[3]}, &ctx));
  EXPECT_EQ(ctx.exchanges, 1);
  EXPECT_THAT(ToVector<float>(out.element(1)), ElementsAre(50, 52, 54, 56));
}

TEST_F(CollectiveTest, AllGatherConcatenatesInGroupOrder) {
  Instruction* ag = t_.AddInferred(Opcode::kAllGather, {x_},
                                   {{"channel_id", int64_t{2}},
                                    {"replica_groups", IntListList{{0, 1}, {3, 2}}},
                                    {"dimensions", IntList{0}},
                                    {"use_global_device_ids", true}});
  EXPECT_EQ(ag->shape(), F32({8}));
  EXPECT_OK(t_.Verify(*ag));
  std::vector<Literal> out = RunOnAllDevices(t_, *ag);
  EXPECT_THAT(ToVector<float>(out[1]), ElementsAre(0, 1, 2, 3, 10, 11, 12, 13));
  EXPECT_THAT(ToVector<float>(out[2]), ElementsAre(30, 31, 32, 33, 20, 21, 22, 23));
}

TEST_F(CollectiveTest, AllGatherWithoutGroupsUsesDeclaredShape) {
  Instruction* ag = t_.Add(Opcode::kAllGather, {x_},
                           {{"dimensions", IntList{0}}, {"channel_id", int64_t{2}},
                            {"use_global_device_ids", true}},
                           F32({16}));
  ASSERT_OK_AND_ASSIGN(Shape shape, t_.Infer(*ag));
  EXPECT_EQ(shape, F32({16}));
  std::vector<Literal> out = RunOnAllDevices(t_, *ag);
  EXPECT_EQ(out[0].num_elements(), 16);
  EXPECT_EQ(out[0].data<float>()[15], 33);
  Instruction* bad = t_.Add(Opcode::kAllGather, {x_}, {{"dimensions", IntList{0}}}, F32({10}));
  EXPECT_THAT(t_.Infer(*bad), Invalid("must be a multiple of"));
  // Declared for 2 devices but run on 4: reported, not silently wrong.
  Instruction* two = t_.Add(Opcode::kAllGather, {x_},
                            {{"dimensions", IntList{0}}, {"channel_id", int64_t{3}},
                             {"use_global_device_ids", true}},
                            F32({8}));
  FakeEvalContext ctx(0, kDevices);
  ctx.device_values = DeviceValues();
  EXPECT_THAT(t_.Eval(*two, {DeviceValues()[0]}, &ctx), Invalid("declares f32[8]"));
}

TEST_F(CollectiveTest, ReduceScatterKeepsOwnChunk) {
  Instruction* rs = t_.AddInferred(Opcode::kReduceScatter, {x_},
                                   {{"channel_id", int64_t{3}},
                                    {"replica_groups", kGroups},
                                    {"dimensions", IntList{0}},
                                    {"use_global_device_ids", true},
                                    {"to_apply", add_}});
  EXPECT_EQ(rs->shape(), F32({2}));
  EXPECT_OK(t_.Verify(*rs));
  std::vector<Literal> out = RunOnAllDevices(t_, *rs);
  EXPECT_THAT(ToVector<float>(out[0]), ElementsAre(10, 12));
  EXPECT_THAT(ToVector<float>(out[1]), ElementsAre(14, 16));
  EXPECT_THAT(ToVector<float>(out[2]), ElementsAre(50, 52));
  EXPECT_THAT(ToVector<float>(out[3]), ElementsAre(54, 56));
}

TEST_F(CollectiveTest, AllToAllArrayForm) {
  Instruction* a2a = t_.AddInferred(
      Opcode::kAllToAll, {x_},
      {{"channel_id", int64_t{4}}, {"replica_groups", kGroups}, {"dimensions", IntList{0}}});
  EXPECT_EQ(a2a->shape(), F32({4}));
  EXPECT_OK(t_.Verify(*a2a));
  std::vector<Literal> out = RunOnAllDevices(t_, *a2a);
  // Member j's chunk i goes to member i, placed at chunk j.
  EXPECT_THAT(ToVector<float>(out[0]), ElementsAre(0, 1, 10, 11));
  EXPECT_THAT(ToVector<float>(out[1]), ElementsAre(2, 3, 12, 13));
  EXPECT_THAT(ToVector<float>(out[2]), ElementsAre(20, 21, 30, 31));
  EXPECT_THAT(ToVector<float>(out[3]), ElementsAre(22, 23, 32, 33));
}

TEST_F(CollectiveTest, AllToAllTupleForm) {
  Instruction* y = t_.Param(F32({4}));
  Instruction* a2a = t_.AddInferred(Opcode::kAllToAll, {x_, y},
                                    {{"channel_id", int64_t{4}}, {"replica_groups", kGroups}});
  EXPECT_EQ(a2a->shape(), Shape::Tuple({F32({4}), F32({4})}));
  std::vector<Literal> values = DeviceValues();
  std::vector<Literal> packed;
  for (const Literal& v : values) packed.push_back(Literal::Tuple({v, v}));
  // Device 1 sends its operand 0 to device 0, operand 1 to itself.
  packed[1].elements()[0] = Values<float>({4}, {7, 7, 7, 7});
  FakeEvalContext ctx(0, kDevices);
  ctx.device_values = packed;
  ASSERT_OK_AND_ASSIGN(Literal out, t_.Eval(*a2a, {values[0], values[0]}, &ctx));
  EXPECT_THAT(ToVector<float>(out.element(0)), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(ToVector<float>(out.element(1)), ElementsAre(7, 7, 7, 7));
  Instruction* three = t_.Add(Opcode::kAllToAll, {x_, y, y}, {{"replica_groups", kGroups}});
  EXPECT_THAT(t_.Infer(*three), Invalid("has 3 operands for groups of 2 devices"));
}

TEST_F(CollectiveTest, CollectivePermuteSendsToTargets) {
  Instruction* cp = t_.AddInferred(
      Opcode::kCollectivePermute, {x_},
      {{"channel_id", int64_t{5}}, {"source_target_pairs", IntListList{{0, 1}, {1, 0}, {2, 3}}}});
  EXPECT_EQ(cp->shape(), F32({4}));
  EXPECT_OK(t_.Verify(*cp));
  std::vector<Literal> out = RunOnAllDevices(t_, *cp);
  EXPECT_THAT(ToVector<float>(out[0]), ElementsAre(10, 11, 12, 13));
  EXPECT_THAT(ToVector<float>(out[1]), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(ToVector<float>(out[2]), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(ToVector<float>(out[3]), ElementsAre(20, 21, 22, 23));
}

// ragged-all-to-all's row check cannot be fooled by s64 offsets whose sum
// overflows (2^62 + 2^62 wraps negative and passed a plain a + b > rows).
TEST(RaggedAllToAllTest, RowChecksDoNotOverflow) {
  const int64_t huge = int64_t{1} << 62;
  EXPECT_OK(CheckRaggedRows(0, 1, 2, 6, 4, 6));
  EXPECT_OK(CheckRaggedRows(0, 6, 0, 6, 6, 6));
  EXPECT_FALSE(CheckRaggedRows(0, huge, huge, 6, 0, 6).ok());
  EXPECT_FALSE(CheckRaggedRows(0, 0, huge, 6, huge, 6).ok());
  EXPECT_FALSE(CheckRaggedRows(0, 5, 2, 6, 0, 6).ok());
  EXPECT_FALSE(CheckRaggedRows(0, -1, 1, 6, 0, 6).ok());
  EXPECT_THAT(CheckRaggedRows(3, 5, 2, 6, 0, 6).message(),
              ::testing::HasSubstr("device 3 sends 2 rows from row 5 of its 6"));
}

TEST_F(CollectiveTest, RejectsBadGroupsAndPairs) {
  auto verify = [&](Opcode op, std::vector<Attribute> attrs) {
    return t_.Verify(*t_.AddInferred(op, {x_}, std::move(attrs)));
  };
  EXPECT_THAT(verify(Opcode::kAllReduce,
                     {{"replica_groups", IntListList{{0, 1}, {1, 2}}}, {"to_apply", add_}}),
              Invalid("device 1 appears twice"));
  // Groups of different sizes: an all-gather's result would not have one
  // shape; an all-reduce's has (XLA's verifier allows it there).
  EXPECT_THAT(verify(Opcode::kAllGather, {{"replica_groups", IntListList{{0, 1, 2}, {3}}},
                                          {"dimensions", IntList{0}}}),
              Invalid("replica group 1 has 1 members but group 0 has 3"));
  EXPECT_OK(verify(Opcode::kAllReduce,
                   {{"replica_groups", IntListList{{0, 1, 2}, {3}}}, {"to_apply", add_}}));
  EXPECT_THAT(
      verify(Opcode::kAllReduce, {{"replica_groups", IntListList{{0, 4}}}, {"to_apply", add_}}),
      Invalid("names device 4, outside [0, 4)"));
  EXPECT_THAT(
      verify(Opcode::kAllReduce, {{"replica_groups", IntListList{{0, 1}, {}}}, {"to_apply", add_}}),
      Invalid("replica group 1 is empty"));
  EXPECT_THAT(verify(Opcode::kAllReduce, {{"use_global_device_ids", true}, {"to_apply", add_}}),
              Invalid("requires a channel_id"));
  EXPECT_THAT(verify(Opcode::kAllReduce, {{"channel_id", int64_t{-1}}, {"to_apply", add_}}),
              Invalid("channel_id must not be negative"));
  EXPECT_OK(verify(Opcode::kAllReduce, {{"channel_id", int64_t{0}}, {"to_apply", add_}}));
  Computation* add_s32 = t_.BinaryComputation("add_s32", Opcode::kAdd, PrimitiveType::kS32);
  EXPECT_THAT(verify(Opcode::kAllReduce, {{"to_apply", add_s32}}),
              Invalid("to_apply computation 'add_s32'"));
  EXPECT_THAT(
      verify(Opcode::kAllGather, {{"dimensions", IntList{0, 0}}, {"replica_groups", kGroups}}),
      Invalid("exactly one dimension"));
  EXPECT_THAT(verify(Opcode::kAllGather, {{"dimensions", IntList{1}}, {"replica_groups", kGroups}}),
              Invalid("out of range"));
  EXPECT_THAT(verify(Opcode::kReduceScatter, {{"dimensions", IntList{0}},
                                              {"replica_groups", IntListList{{0, 1, 2}}},
                                              {"to_apply", add_}}),
              Invalid("not divisible by the group size 3"));
  EXPECT_THAT(verify(Opcode::kAllToAll,
                     {{"dimensions", IntList{0}}, {"replica_groups", IntListList{{0, 1, 2}}}}),
              Invalid("not divisible by the group size 3"));
  EXPECT_THAT(
      verify(Opcode::kCollectivePermute, {{"source_target_pairs", IntListList{{0, 1}, {0, 2}}}}),
      Invalid("device 0 is the source of more than one pair"));
  EXPECT_THAT(
      verify(Opcode::kCollectivePermute, {{"source_target_pairs", IntListList{{0, 1}, {2, 1}}}}),
      Invalid("device 1 is the target of more than one pair"));
  EXPECT_THAT(verify(Opcode::kCollectivePermute, {{"source_target_pairs", IntListList{{0}}}}),
              Invalid("is not a pair"));
  EXPECT_THAT(verify(Opcode::kCollectivePermute, {{"source_target_pairs", IntListList{{0, 9}}}}),
              Invalid("names device 9"));
}

TEST_F(CollectiveTest, DeviceOutsideEveryGroupIsAnError) {
  Instruction* ar = t_.AddInferred(Opcode::kAllReduce, {x_},
                                   {{"channel_id", int64_t{1}},
                                    {"use_global_device_ids", true},
                                    {"replica_groups", IntListList{{0, 1}}},
                                    {"to_apply", add_}});
  FakeEvalContext ctx(3, kDevices);
  ctx.device_values = DeviceValues();
  EXPECT_THAT(t_.Eval(*ar, {DeviceValues()[3]}, &ctx), Invalid("device 3 is in no replica group"));
}

// The same collectives through the parser, the verifier and the SPMD
// interpreter's real rendezvous on 4 device threads.
TEST(CollectiveSpmdTest, ParsedModuleOnFourDevices) {
  constexpr char kText[] = R"(
HloModule collectives, num_partitions=4

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4]) -> (f32[4], f32[8], f32[2], f32[4], f32[4]) {
  %x = f32[4] parameter(0)
  %ar = f32[4] all-reduce(%x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%sum
  %ag = f32[8] all-gather(%x), channel_id=2, replica_groups=[2,2]<=[4], dimensions={0}, use_global_device_ids=true
  %rs = f32[2] reduce-scatter(%x), channel_id=3, replica_groups={{0,1},{2,3}}, dimensions={0}, use_global_device_ids=true, to_apply=%sum
  %a2a = f32[4] all-to-all(%x), channel_id=4, replica_groups={{0,1},{2,3}}, dimensions={0}
  %cp = f32[4] collective-permute(%x), channel_id=5, source_target_pairs={{0,1},{1,0},{2,3}}
  ROOT %t = (f32[4], f32[8], f32[2], f32[4], f32[4]) tuple(%ar, %ag, %rs, %a2a, %cp)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(kText));
  std::vector<std::vector<Literal>> args;
  for (Literal& v : DeviceValues()) args.push_back({std::move(v)});
  SpmdOptions options;
  options.num_devices = kDevices;
  ASSERT_OK_AND_ASSIGN(std::vector<Literal> out, EvaluateSpmd(*module, args, options));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(ToVector<float>(out[1].element(0)), ElementsAre(10, 12, 14, 16));
  EXPECT_THAT(ToVector<float>(out[2].element(1)), ElementsAre(20, 21, 22, 23, 30, 31, 32, 33));
  EXPECT_THAT(ToVector<float>(out[3].element(2)), ElementsAre(54, 56));
  EXPECT_THAT(ToVector<float>(out[1].element(3)), ElementsAre(2, 3, 12, 13));
  EXPECT_THAT(ToVector<float>(out[2].element(4)), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(ToVector<float>(out[3].element(4)), ElementsAre(20, 21, 22, 23));
}

TEST(CollectiveSpmdTest, VerifierRejectsGroupsBeyondNumPartitions) {
  constexpr char kText[] = R"(
HloModule bad, num_partitions=2

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %ar = f32[4] all-reduce(%x), replica_groups={{0,1},{2,3}}, to_apply=%sum
}
)";
  EXPECT_THAT(ParseAndVerifyModule(kText), Invalid("names device 2, outside [0, 2)"));
}

}  // namespace
}  // namespace sharc::hlo
