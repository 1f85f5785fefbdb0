// Tests of the HLO text parser on valid input: every sharding form, literals
// of every dtype, attributes of every AttrKind, the syntax variants XLA dumps
// use, and print/parse round trips of one small module per opcode.
#include "hlo/text/parser.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hlo/ir/opcode.h"
#include "hlo/ops/op_def.h"
#include "hlo/text/printer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::testing::IsOk;
using ::testing::ElementsAre;

// Parses (and verifies, unless `verify` is false), then checks that the
// printed text is a fixed point: print(parse(print(parse(x)))) == print(parse(x)).
std::unique_ptr<Module> ParseRoundTrip(const std::string& text, bool verify = true) {
  auto first = verify ? ParseAndVerifyModule(text) : ParseModule(text);
  EXPECT_THAT(first, IsOk()) << text;
  if (!first.ok()) return nullptr;
  std::string printed = PrintModule(**first);
  auto second = verify ? ParseAndVerifyModule(printed) : ParseModule(printed);
  EXPECT_THAT(second, IsOk()) << printed;
  if (!second.ok()) return nullptr;
  EXPECT_EQ(PrintModule(**second), printed);
  return std::move(first).value();
}

Instruction* Find(const Module& module, std::string_view name) {
  for (Computation* c : module.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

// ------------------------------------------------------------- shardings

Sharding MustParseSharding(std::string_view text) {
  auto s = ParseSharding(text);
  EXPECT_THAT(s, IsOk()) << text;
  return s.ok() ? *s : Sharding();
}

TEST(ParseReplicaGroupsTest, ListAndIotaFormsAndErrors) {
  auto list = ParseReplicaGroups("{{0,1},{2,3}}");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, (IntListList{{0, 1}, {2, 3}}));
  auto iota = ParseReplicaGroups("[2,2]<=[2,2]T(1,0)");
  ASSERT_TRUE(iota.ok()) << iota.status();
  EXPECT_EQ(*iota, (IntListList{{0, 2}, {1, 3}}));
  auto bad = ParseReplicaGroups("{{0,1},{2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("<replica groups>:1:"), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseReplicaGroups("{{0,1}} trailing").ok());
}

TEST(ParseShardingTest, SimpleKinds) {
  EXPECT_TRUE(MustParseSharding("{replicated}").IsReplicated());
  EXPECT_TRUE(MustParseSharding("{manual}").IsManual());
  EXPECT_TRUE(MustParseSharding("{unknown}").IsUnknown());
  Sharding maximal = MustParseSharding("{maximal device=3}");
  ASSERT_TRUE(maximal.IsMaximal());
  EXPECT_EQ(maximal.maximal_device(), 3);
}

TEST(ParseShardingTest, ExplicitDevices) {
  Sharding s = MustParseSharding("{devices=[2,2]0,2,1,3}");
  ASSERT_TRUE(s.IsTiled());
  EXPECT_THAT(s.tile_assignment().dims(), ElementsAre(2, 2));
  EXPECT_THAT(s.tile_assignment().devices(), ElementsAre(0, 2, 1, 3));
  EXPECT_EQ(s.ToString(), "{devices=[2,2]0,2,1,3}");
}

TEST(ParseShardingTest, IotaForms) {
  Sharding iota = MustParseSharding("{devices=[4,2]<=[8]}");
  EXPECT_EQ(iota, MustParseSharding("{devices=[4,2]0,1,2,3,4,5,6,7}"));
  EXPECT_EQ(iota.ToString(), "{devices=[4,2]<=[8]}");
  Sharding transposed = MustParseSharding("{devices=[2,4]<=[4,2]T(1,0)}");
  EXPECT_THAT(transposed.tile_assignment().devices(), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  EXPECT_EQ(transposed.ToString(), "{devices=[2,4]<=[4,2]T(1,0)}");
}

TEST(ParseShardingTest, PartialReplication) {
  Sharding s = MustParseSharding("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ASSERT_TRUE(s.IsTiled());
  EXPECT_TRUE(s.ReplicateOnLastTileDim());
  EXPECT_EQ(s.ReplicationFactor(), 2);
  // Replication groups are sets: stored sorted.
  EXPECT_EQ(MustParseSharding("{devices=[1,2,2]1,0,3,2 last_tile_dim_replicate}"),
            MustParseSharding("{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}"));
  // A replication dim holding every device is plain replication.
  EXPECT_TRUE(MustParseSharding("{devices=[1,4]0,1,2,3 last_tile_dim_replicate}").IsReplicated());
}

TEST(ParseShardingTest, LastTileDims) {
  Sharding manual = MustParseSharding("{devices=[1,2,2]0,1,2,3 last_tile_dims={manual}}");
  ASSERT_TRUE(manual.IsTiled());
  EXPECT_TRUE(manual.HasManualSubgroup());
  Sharding both = MustParseSharding("{devices=[2,1,2,2]<=[8] last_tile_dims={manual, replicated}}");
  ASSERT_TRUE(both.IsTiled());
  EXPECT_THAT(both.subgroup_types(), ElementsAre(SubgroupType::kManual, SubgroupType::kReplicated));
  EXPECT_EQ(MustParseSharding(both.ToString()), both);
}

TEST(ParseShardingTest, ShardGroups) {
  Sharding as = MustParseSharding("{unknown shard_as 0}");
  ASSERT_TRUE(as.shard_group().has_value());
  EXPECT_TRUE(as.shard_group()->shard_as);
  EXPECT_EQ(as.shard_group()->id, 0);
  Sharding like = MustParseSharding("{devices=[2]0,1 shard_like 7}");
  ASSERT_TRUE(like.shard_group().has_value());
  EXPECT_FALSE(like.shard_group()->shard_as);
  EXPECT_EQ(like.shard_group()->id, 7);
  EXPECT_EQ(MustParseSharding(like.ToString()), like);
}

TEST(ParseShardingTest, MetadataIsIgnored) {
  EXPECT_EQ(MustParseSharding(
                "{devices=[2,1]0,1 metadata={op_name=\"a\" source_file=\"m.py\" source_line=7}}"),
            MustParseSharding("{devices=[2,1]0,1}"));
  EXPECT_EQ(MustParseSharding("{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}"),
            Sharding::Replicated());
}

TEST(ParseShardingTest, PartsInAnyOrder) {
  EXPECT_EQ(MustParseSharding("{last_tile_dim_replicate devices=[2,2]0,1,2,3}"),
            MustParseSharding("{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"));
  EXPECT_EQ(MustParseSharding("{device=1 maximal}"), Sharding::Maximal(1));
  EXPECT_EQ(MustParseSharding("{shard_as 2 devices=[2]0,1}").shard_group()->id, 2);
}

TEST(ParseShardingTest, Tuples) {
  Sharding t = MustParseSharding("{{replicated}, {devices=[2]0,1}, {maximal device=0}}");
  ASSERT_TRUE(t.IsTuple());
  ASSERT_EQ(t.tuple_elements().size(), 3u);
  EXPECT_TRUE(t.tuple_elements()[0].IsReplicated());
  EXPECT_TRUE(t.tuple_elements()[1].IsTiled());
  EXPECT_TRUE(t.tuple_elements()[2].IsMaximal());
  Sharding empty = MustParseSharding("{}");
  ASSERT_TRUE(empty.IsTuple());
  EXPECT_TRUE(empty.tuple_elements().empty());
  // The printer's /*index=N*/ markers are comments.
  Sharding six = MustParseSharding(
      "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, /*index=5*/"
      "{manual}}");
  ASSERT_EQ(six.tuple_elements().size(), 6u);
  EXPECT_TRUE(six.tuple_elements()[5].IsManual());
}

TEST(ParseShardingTest, PrintedFormsRoundTrip) {
  for (const char* text :
       {"{replicated}", "{manual}", "{unknown}", "{maximal device=5}", "{devices=[2,2]0,1,2,3}",
        "{devices=[4,2]<=[8]}", "{devices=[2,4]<=[4,2]T(1,0)}",
        "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
        "{devices=[1,2,2]0,1,2,3 last_tile_dims={manual}}", "{unknown shard_as 1}",
        "{{replicated}, {devices=[2]0,1}}", "{}"}) {
    Sharding s = MustParseSharding(text);
    EXPECT_EQ(s.ToString(), text);
    EXPECT_EQ(MustParseSharding(s.ToString()), s);
  }
}

// ---------------------------------------------------------------- shapes

TEST(ParseShapeTest, ArraysTuplesAndLayouts) {
  auto s = ParseShape("f32[2,3]{1,0}");
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s, Shape(PrimitiveType::kF32, {2, 3}));
  auto t = ParseShape("(f32[], (s32[4], pred[]), ())");
  ASSERT_THAT(t, IsOk());
  EXPECT_EQ(t->ToString(), "(f32[], (s32[4], pred[]), ())");
  EXPECT_EQ(t->leaf_count(), 3);
  auto tiled = ParseShape("bf16[8,128]{1,0:T(8,128)(2,1)}");
  ASSERT_THAT(tiled, IsOk());
  EXPECT_EQ(*tiled, Shape(PrimitiveType::kBF16, {8, 128}));
  auto scalar_layout = ParseShape("s32[]{:T(256)}");
  ASSERT_THAT(scalar_layout, IsOk());
  EXPECT_EQ(*scalar_layout, Shape::Scalar(PrimitiveType::kS32));
}

TEST(ParseShapeTest, EveryElementType) {
  int count = 0;
  const PrimitiveType* types = AllArrayTypes(&count);
  for (int i = 0; i < count; ++i) {
    std::string text = std::string(PrimitiveTypeName(types[i])) + "[3]";
    auto s = ParseShape(text);
    ASSERT_THAT(s, IsOk()) << text;
    EXPECT_EQ(s->type(), types[i]);
  }
}

// -------------------------------------------------------------- literals

std::unique_ptr<Module> ParseConstant(const std::string& shape, const std::string& literal) {
  return ParseRoundTrip("HloModule m\nENTRY %e {\n  ROOT %c = " + shape + " constant(" + literal +
                        ")\n}\n");
}

TEST(ParseLiteralTest, Floats) {
  auto m = ParseConstant("f32[7]", "{1, -2.5, 1e3, 1.5E-2, inf, -inf, nan}");
  ASSERT_NE(m, nullptr);
  const Literal& l = m->entry()->root()->literal();
  EXPECT_EQ(l.GetAsDouble(0), 1.0);
  EXPECT_EQ(l.GetAsDouble(1), -2.5);
  EXPECT_EQ(l.GetAsDouble(2), 1000.0);
  EXPECT_FLOAT_EQ(static_cast<float>(l.GetAsDouble(3)), 0.015f);
  EXPECT_TRUE(std::isinf(l.GetAsDouble(4)) && l.GetAsDouble(4) > 0);
  EXPECT_TRUE(std::isinf(l.GetAsDouble(5)) && l.GetAsDouble(5) < 0);
  EXPECT_TRUE(std::isnan(l.GetAsDouble(6)));
}

TEST(ParseLiteralTest, EveryDtype) {
  struct Case {
    const char* shape;
    const char* literal;
    std::vector<double> expected;
  };
  const Case cases[] = {
      {"pred[3]", "{true, false, 1}", {1, 0, 1}},
      {"s8[3]", "{-128, 0, 127}", {-128, 0, 127}},
      {"s16[2]", "{-32768, 32767}", {-32768, 32767}},
      {"s32[2]", "{-2147483648, 2147483647}", {-2147483648.0, 2147483647.0}},
      {"u8[2]", "{0, 255}", {0, 255}},
      {"u16[2]", "{0, 65535}", {0, 65535}},
      {"u32[2]", "{0, 4294967295}", {0, 4294967295.0}},
      {"f16[3]", "{0.5, -2, 65504}", {0.5, -2, 65504}},
      {"bf16[3]", "{0.5, -2, 256}", {0.5, -2, 256}},
      {"f32[2]", "{0.25, -3}", {0.25, -3}},
      {"f64[2]", "{0.125, 1e300}", {0.125, 1e300}},
  };
  for (const Case& c : cases) {
    auto m = ParseConstant(c.shape, c.literal);
    ASSERT_NE(m, nullptr) << c.shape;
    const Literal& l = m->entry()->root()->literal();
    for (size_t i = 0; i < c.expected.size(); ++i) {
      EXPECT_EQ(l.GetAsDouble(static_cast<int64_t>(i)), c.expected[i]) << c.shape << " " << i;
    }
  }
}

TEST(ParseLiteralTest, SixtyFourBitIntegersAreExact) {
  auto s = ParseConstant("s64[3]", "{-9223372036854775808, 9223372036854775807, 9007199254740993}");
  ASSERT_NE(s, nullptr);
  auto sv = s->entry()->root()->literal().data<int64_t>();
  EXPECT_EQ(sv[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(sv[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(sv[2], 9007199254740993);  // 2^53 + 1: not representable as a double
  auto u = ParseConstant("u64[2]", "{18446744073709551615, 9007199254740993}");
  ASSERT_NE(u, nullptr);
  auto uv = u->entry()->root()->literal().data<uint64_t>();
  EXPECT_EQ(uv[0], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(uv[1], 9007199254740993u);
}

TEST(ParseLiteralTest, ScalarsAndNestedBraces) {
  auto scalar = ParseConstant("f32[]", "-inf");
  ASSERT_NE(scalar, nullptr);
  EXPECT_EQ(scalar->entry()->root()->literal().GetAsDouble(0),
            -std::numeric_limits<double>::infinity());
  auto t = ParseConstant("pred[]", "true");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->entry()->root()->literal().GetAsInt64(0), 1);
  auto m = ParseConstant("s32[2,3]", "{ {1, 2, 3}, {4, 5, 6} }");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->entry()->root()->literal().data<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  auto empty = ParseConstant("f32[2,0]", "{ {}, {} }");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->entry()->root()->literal().num_elements(), 0);
}

TEST(ParseLiteralTest, OldFormWithShapeInside) {
  auto m = ParseConstant("f32[2]", "f32[2] {1, 2}");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(m->entry()->root()->literal().data<float>(), ElementsAre(1.0f, 2.0f));
  auto with_layout = ParseConstant("s32[2,2]{1,0}", "s32[2,2]{1,0} { {1, 2}, {3, 4} }");
  ASSERT_NE(with_layout, nullptr);
  EXPECT_THAT(with_layout->entry()->root()->literal().data<int32_t>(), ElementsAre(1, 2, 3, 4));
}

TEST(ParseLiteralTest, TupleLiteral) {
  auto m = ParseConstant("(f32[2], s32[])", "({1, 2}, 3)");
  ASSERT_NE(m, nullptr);
  const Literal& l = m->entry()->root()->literal();
  ASSERT_TRUE(l.is_tuple());
  EXPECT_THAT(l.element(0).data<float>(), ElementsAre(1.0f, 2.0f));
  EXPECT_EQ(l.element(1).GetAsInt64(0), 3);
}

// ------------------------------------------------------------ attributes

TEST(ParseAttributeTest, EveryKind) {
  const std::string text = R"(
HloModule attrs, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %p = f32[8,16] parameter(0)
  %t = (f32[8,16], f32[8,16]) tuple(%p, %p)
  %gte = f32[8,16] get-tuple-element(%t), index=1
  %tr = f32[16,8] transpose(%gte), dimensions={1,0}
  %cmp = pred[8,16] compare(%p, %p), direction=LT, type=FLOAT
  %sl = f32[4,4] slice(%p), slice={[0:4], [2:10:2]}
  %zero = f32[] constant(0)
  %pad = f32[9,15] pad(%p, %zero), padding=1_0x-1_0_0
  %rw = f32[4,8] reduce-window(%p, %zero), window={size=2x3 stride=2x2 pad=0_0x1_1}, to_apply=%add
  %ar = f32[8,16] all-reduce(%p), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%add
  %ag = f32[8,64] all-gather(%p), channel_id=2, replica_groups=[1,4]<=[4], dimensions={1}, use_global_device_ids=true
  %cp = f32[8,16] collective-permute(%p), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  %cc = f32[8,16] custom-call(%p), custom_call_target="Sharding", backend_config="a\"b\\c"
  ROOT %out = (f32[16,8], pred[8,16], f32[4,4], f32[9,15], f32[4,8], f32[8,16], f32[8,64], f32[8,16], f32[8,16]) tuple(%tr, %cmp, %sl, %pad, %rw, %ar, %ag, %cp, %cc)
}
)";
  auto m = ParseRoundTrip(text);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "gte")->attr_int("index"), 1);
  EXPECT_THAT(Find(*m, "tr")->attr_ints("dimensions"), ElementsAre(1, 0));
  EXPECT_EQ(Find(*m, "cmp")->attr_string("direction"), "LT");
  EXPECT_EQ(Find(*m, "cmp")->attr_string("type"), "FLOAT");
  EXPECT_THAT(Find(*m, "sl")->attr_int_lists("slice"),
              ElementsAre(ElementsAre(0, 4, 1), ElementsAre(2, 10, 2)));
  EXPECT_THAT(Find(*m, "pad")->attr_int_lists("padding"),
              ElementsAre(ElementsAre(1, 0, 0), ElementsAre(-1, 0, 0)));
  EXPECT_THAT(Find(*m, "rw")->attr_int_lists("window"),
              ElementsAre(ElementsAre(2, 2, 0, 0, 1, 1), ElementsAre(3, 2, 1, 1, 1, 1)));
  EXPECT_THAT(Find(*m, "ar")->attr_int_lists("replica_groups"),
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
  EXPECT_TRUE(Find(*m, "ar")->attr_bool("use_global_device_ids"));
  EXPECT_EQ(Find(*m, "ar")->attr_computation("to_apply")->name(), "add");
  EXPECT_THAT(Find(*m, "ag")->attr_int_lists("replica_groups"),
              ElementsAre(ElementsAre(0, 1, 2, 3)));
  EXPECT_THAT(
      Find(*m, "cp")->attr_int_lists("source_target_pairs"),
      ElementsAre(ElementsAre(0, 1), ElementsAre(1, 2), ElementsAre(2, 3), ElementsAre(3, 0)));
  EXPECT_EQ(Find(*m, "cc")->attr_string("custom_call_target"), "Sharding");
  EXPECT_EQ(Find(*m, "cc")->attr_string("backend_config"), "a\"b\\c");
}

TEST(ParseAttributeTest, WindowWithDilations) {
  auto m = ParseRoundTrip(R"(
HloModule w
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %main {
  %p = f32[8] parameter(0)
  %init = f32[] constant(-inf)
  ROOT %rw = f32[8] reduce-window(%p, %init), window={size=3 pad=2_2 rhs_dilate=2}, to_apply=%max
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(Find(*m, "rw")->attr_int_lists("window"), ElementsAre(ElementsAre(3, 1, 2, 2, 1, 2)));
}

TEST(ParseAttributeTest, IotaReplicaGroupsWithTranspose) {
  auto m = ParseRoundTrip(R"(
HloModule g, num_partitions=8
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %ag = f32[16] all-gather(%p), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), dimensions={0}, use_global_device_ids=true
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(Find(*m, "ag")->attr_int_lists("replica_groups"),
              ElementsAre(ElementsAre(0, 2, 4, 6), ElementsAre(1, 3, 5, 7)));
}

TEST(ParseAttributeTest, ComputationList) {
  auto m = ParseRoundTrip(R"(
HloModule c
%b0 (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %n = f32[] negate(%x)
}
%b1 (y: f32[]) -> f32[] {
  %y = f32[] parameter(0)
  ROOT %c = f32[] copy(%y)
}
ENTRY %main {
  %i = s32[] parameter(0)
  %v = f32[] parameter(1)
  ROOT %cond = f32[] conditional(%i, %v, %v), branch_computations={%b0, %b1}
}
)");
  ASSERT_NE(m, nullptr);
  const auto& branches = Find(*m, "cond")->attr_computations("branch_computations");
  ASSERT_EQ(branches.size(), 2u);
  EXPECT_EQ(branches[0]->name(), "b0");
  EXPECT_EQ(branches[1]->name(), "b1");
}

TEST(ParseAttributeTest, GenericAttributes) {
  auto m = ParseRoundTrip(R"(
HloModule gen
ENTRY %main {
  %p = f32[4] parameter(0), parameter_replication={false}, sharding={devices=[2]0,1}
  %n = f32[4] negate(%p), metadata={op_type="neg" op_name="jit(f)/neg" source_file="f.py" source_line=12 stack_frame_id=3}, frontend_attributes={_xla_compute_type="host"}, backend_config={"flag":true,"n":[1,2]}, control-predecessors={%p}, statistics={visualizing_index=1}
  ROOT %e = f32[4] exponential(%n), backend_config="raw", original_value={[0]}, result_accuracy={tolerance={atol=0}}
}
)");
  ASSERT_NE(m, nullptr);
  Instruction* n = Find(*m, "n");
  EXPECT_EQ(n->metadata().op_type, "neg");
  EXPECT_EQ(n->metadata().op_name, "jit(f)/neg");
  EXPECT_EQ(n->metadata().source_file, "f.py");
  EXPECT_EQ(n->metadata().source_line, 12);
  EXPECT_EQ(n->frontend_attributes(), "{_xla_compute_type=\"host\"}");
  EXPECT_EQ(n->backend_config(), "{\"flag\":true,\"n\":[1,2]}");
  EXPECT_EQ(Find(*m, "e")->backend_config(), "raw");
  ASSERT_TRUE(Find(*m, "p")->has_sharding());
  EXPECT_TRUE(Find(*m, "p")->sharding()->IsTiled());
}

TEST(ParseAttributeTest, CustomCallAttributes) {
  // custom-call's own schema has backend_config: it is an op attribute there,
  // and may be written as a JSON object.
  auto m = ParseRoundTrip(R"(
HloModule cc
ENTRY %main {
  %p = f32[4] parameter(0)
  ROOT %c = f32[4] custom-call(%p), custom_call_target="my_target", custom_call_has_side_effect=true, api_version=API_VERSION_STATUS_RETURNING, backend_config={"k": [1, {"n": -2.5e3}]}, custom_call_schedule=SCHEDULE_NONE, operand_layout_constraints={f32[4]{0}}
}
)",
                          /*verify=*/false);
  ASSERT_NE(m, nullptr);
  Instruction* c = Find(*m, "c");
  EXPECT_EQ(c->attr_string("custom_call_target"), "my_target");
  EXPECT_TRUE(c->attr_bool("custom_call_has_side_effect"));
  EXPECT_EQ(c->attr_string("api_version"), "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(c->attr_string("backend_config"), "{\"k\": [1, {\"n\": -2.5e3}]}");
  EXPECT_TRUE(c->backend_config().empty());
}

TEST(ParseAttributeTest, AttributesAreStoredInSchemaOrder) {
  auto m = ParseRoundTrip(R"(
HloModule order
ENTRY %main {
  %l = f32[2,3] parameter(0)
  %r = f32[3,4] parameter(1)
  ROOT %d = f32[2,4] dot(%l, %r), rhs_contracting_dims={0}, lhs_contracting_dims={1}
}
)");
  ASSERT_NE(m, nullptr);
  const auto& attrs = Find(*m, "d")->attributes();
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].name, "lhs_contracting_dims");
  EXPECT_EQ(attrs[1].name, "rhs_contracting_dims");
}

TEST(ParseAttributeTest, ShardingsOnTupleShapedInstructions) {
  auto m = ParseRoundTrip(R"(
HloModule ts, num_partitions=2
ENTRY %main {
  %a = f32[4] parameter(0)
  %inner = (f32[4], f32[4]) tuple(%a, %a), sharding={devices=[2]0,1}
  ROOT %t = (f32[4], (f32[4], f32[4])) tuple(%a, %inner), sharding={{replicated}, {devices=[2]0,1}, {replicated}}
}
)");
  ASSERT_NE(m, nullptr);
  // A non-tuple sharding on a tuple shape applies to every leaf; it is kept as written.
  EXPECT_FALSE(Find(*m, "inner")->sharding()->IsTuple());
  const Sharding& t = *Find(*m, "t")->sharding();
  ASSERT_TRUE(t.IsTuple());
  EXPECT_EQ(t.tuple_elements().size(), 3u);
}

// --------------------------------------------------------- module syntax

TEST(ParseModuleTest, HeaderAttributes) {
  auto m = ParseRoundTrip(R"(
HloModule hdr, is_scheduled=true, entry_computation_layout={(f32[8]{0}, s32[]{:T(256)})->f32[8]{0}}, replica_count=1, num_partitions=4, allow_spmd_sharding_propagation_to_output={true}, allow_spmd_sharding_propagation_to_parameters={false,true}, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (0, {}) }, frontend_attributes={attr="v"}, alias_passthrough_params=true, mesh={clients=2, data=2}

ENTRY %main {
  %p = f32[8] parameter(0)
  %q = s32[] parameter(1)
  ROOT %n = f32[8] negate(%p)
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleConfig& c = m->config();
  EXPECT_EQ(m->name(), "hdr");
  EXPECT_EQ(c.num_partitions, 4);
  EXPECT_EQ(c.replica_count, 1);
  EXPECT_THAT(c.allow_spmd_sharding_propagation_to_output, ElementsAre(true));
  EXPECT_THAT(c.allow_spmd_sharding_propagation_to_parameters, ElementsAre(false, true));
  ASSERT_EQ(c.mesh.size(), 2u);
  EXPECT_EQ(c.mesh[0], (MeshAxis{"clients", 2}));
  EXPECT_EQ(c.mesh[1], (MeshAxis{"data", 2}));
  EXPECT_THAT(c.input_output_alias, ElementsAre(InputOutputAlias{{}, 0, {}, false}));
  EXPECT_THAT(c.buffer_donors, ElementsAre(BufferDonor{0, {}}));
}

// Found by the parser fuzzer: a module name that starts with a digit parses
// after '%' and must print with it, or the printed text does not parse. The
// same holds for mesh axis names, printed in the header and in variances.
TEST(ParseModuleTest, ModuleNamesThatNeedThePercentRoundTrip) {
  for (const char* name : {"%01_model", "%.hidden", "%_under", "%plain"}) {
    auto m = ParseRoundTrip(absl::StrCat("HloModule ", name, "\nENTRY %main {\n  ROOT %p = f32[2] parameter(0)\n}\n"));
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->name(), std::string(name).substr(1));
  }
  auto m = ParseRoundTrip(R"(HloModule m, mesh={%0x=2, y=2}
ENTRY %main {
  %p = f32[2]{V:%0x} parameter(0)
  ROOT %n = f32[2]{V:%0x} negate(%p)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->config().mesh[0].name, "0x");
}

TEST(ParseModuleTest, SyntaxVariants) {
  // Names without '%', comments everywhere, layouts, operand shapes, a
  // signature, no ROOT (the last instruction is the root), no ENTRY (the last
  // computation is the entry), and an execution thread.
  auto m = ParseRoundTrip(R"(
// leading comment
HloModule variants /* block */

sum (a: f32[], b: f32[]) -> f32[] {
  a = f32[] parameter(0)
  b = f32[] parameter(1) // trailing
  ROOT s = f32[] add(f32[] a, f32[]{} b)
}, execution_thread="main"

main.1 (x: f32[4,2]) -> f32[4] {
  x = f32[4,2]{1,0} parameter(0)
  /* the reduction */ zero = f32[] constant(0)
  r = f32[4]{0} reduce(f32[4,2]{1,0} x, f32[] zero), dimensions={1}, to_apply=sum
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->entry()->name(), "main.1");
  EXPECT_EQ(m->entry()->root()->name(), "r");
  EXPECT_EQ(m->computations()[0]->root()->name(), "s");
}

TEST(ParseModuleTest, EntryNeedNotBeLast) {
  auto m = ParseRoundTrip(R"(
HloModule e
ENTRY %main {
  ROOT %p = f32[] parameter(0)
}
%unused {
  ROOT %q = f32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "main");
}

TEST(ParseModuleTest, NamesAreScopedPerComputation) {
  auto m = ParseRoundTrip(R"(
HloModule scoped
%f (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  ROOT %y = f32[] negate(%x)
}
ENTRY %main {
  %x = f32[] parameter(0)
  ROOT %y = f32[] call(%x), to_apply=%f
}
)");
  ASSERT_NE(m, nullptr);
}

TEST(ParseModuleTest, SourceLocations) {
  ParseOptions options;
  options.filename = "model.hlo";
  auto m = ParseModule(
      "HloModule loc\n\nENTRY %main {\n  %p = f32[] parameter(0)\n"
      "  ROOT %n = f32[] negate(%p)\n}\n",
      options);
  ASSERT_THAT(m, IsOk());
  const SourceLocation& p = (*m)->entry()->parameter(0)->location();
  EXPECT_EQ(p.file, "model.hlo");
  EXPECT_EQ(p.line, 4);
  EXPECT_EQ(p.column, 3);
  EXPECT_EQ((*m)->entry()->root()->location().ToString(), "model.hlo:5:8");
}

// ------------------------------------------------------- one op per snippet

struct OpSnippet {
  const char* opcode;
  const char* text;
};

// XLA-style modules, one per opcode of hlo/ir/opcode.def (some cover more).
const OpSnippet kOpSnippets[] = {
    {"constant", R"(HloModule m
ENTRY %e {
  ROOT %c = f32[2,2] constant({ {1, 2.5}, {-3, 4e-3} })
})"},
    {"iota", R"(HloModule m
ENTRY %e {
  ROOT %i = s32[4,3] iota(), iota_dimension=1
})"},
    {"parameter", R"(HloModule m
ENTRY %e {
  %p0 = f32[4] parameter(0)
  ROOT %p1 = s32[] parameter(1)
})"},
    {"partition-id", R"(HloModule m, num_partitions=2
ENTRY %e {
  ROOT %id = u32[] partition-id()
})"},
    {"replica-id", R"(HloModule m
ENTRY %e {
  ROOT %id = u32[] replica-id()
})"},
    {"unary", R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %i = s32[4] parameter(1)
  %b = pred[4] parameter(2)
  %abs = f32[4] abs(%x)
  %cbrt = f32[4] cbrt(%x)
  %ceil = f32[4] ceil(%x)
  %convert = s32[4] convert(%x)
  %copy = f32[4] copy(%x)
  %cos = f32[4] cosine(%x)
  %exp = f32[4] exponential(%x)
  %expm1 = f32[4] exponential-minus-one(%x)
  %floor = f32[4] floor(%x)
  %fin = pred[4] is-finite(%x)
  %log = f32[4] log(%x)
  %log1p = f32[4] log-plus-one(%x)
  %logistic = f32[4] logistic(%x)
  %neg = f32[4] negate(%x)
  %not = pred[4] not(%b)
  %inot = s32[4] not(%i)
  %afz = f32[4] round-nearest-afz(%x)
  %even = f32[4] round-nearest-even(%x)
  %rsqrt = f32[4] rsqrt(%x)
  %sign = f32[4] sign(%x)
  %sin = f32[4] sine(%x)
  %sqrt = f32[4] sqrt(%x)
  %tan = f32[4] tan(%x)
  %tanh = f32[4] tanh(%x)
  ROOT %t = (f32[4], f32[4], f32[4], s32[4], f32[4], f32[4], f32[4], f32[4], f32[4], pred[4], f32[4], f32[4], f32[4], f32[4], pred[4], s32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(%abs, %cbrt, %ceil, %convert, %copy, %cos, %exp, %expm1, %floor, %fin, %log, %log1p, %logistic, %neg, %not, %inot, %afz, %even, %rsqrt, %sign, %sin, %sqrt, %tan, %tanh)
})"},
    {"more-unary", R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %i = s32[4] parameter(1)
  %acos = f32[4] acos(%x)
  %acosh = f32[4] acosh(%x)
  %asin = f32[4] asin(%x)
  %asinh = f32[4] asinh(%x)
  %atanh = f32[4] atanh(%x)
  %cosh = f32[4] cosh(%x)
  %sinh = f32[4] sinh(%x)
  %erf = f32[4] erf(%x)
  %popcnt = s32[4] popcnt(%i)
  %clz = s32[4] count-leading-zeros(%i)
  %rp = f32[4] reduce-precision(%x), exponent_bits=5, mantissa_bits=10
  ROOT %t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], f32[4], s32[4], s32[4], f32[4]) tuple(%acos, %acosh, %asin, %asinh, %atanh, %cosh, %sinh, %erf, %popcnt, %clz, %rp)
})"},
    {"binary", R"(HloModule m
ENTRY %e {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  %i = s32[4] parameter(2)
  %j = s32[4] parameter(3)
  %b = pred[4] parameter(4)
  %add = f32[4] add(%x, %y)
  %and = s32[4] and(%i, %j)
  %atan2 = f32[4] atan2(%x, %y)
  %clamp = f32[4] clamp(%x, %y, %x)
  %cmp = pred[4] compare(%x, %y), direction=GE
  %icmp = pred[4] compare(%i, %j), direction=NE, type=SIGNED
  %div = f32[4] divide(%x, %y)
  %max = f32[4] maximum(%x, %y)
  %min = f32[4] minimum(%x, %y)
  %mul = f32[4] multiply(%x, %y)
  %or = pred[4] or(%b, %cmp)
  %pow = f32[4] power(%x, %y)
  %rem = s32[4] remainder(%i, %j)
  %sel = f32[4] select(%b, %x, %y)
  %shl = s32[4] shift-left(%i, %j)
  %sra = s32[4] shift-right-arithmetic(%i, %j)
  %srl = s32[4] shift-right-logical(%i, %j)
  %sub = f32[4] subtract(%x, %y)
  %xor = s32[4] xor(%i, %j)
  ROOT %t = (f32[4], s32[4], f32[4], f32[4], pred[4], pred[4], f32[4], f32[4], f32[4], f32[4], pred[4], f32[4], s32[4], f32[4], s32[4], s32[4], s32[4], f32[4], s32[4]) tuple(%add, %and, %atan2, %clamp, %cmp, %icmp, %div, %max, %min, %mul, %or, %pow, %rem, %sel, %shl, %sra, %srl, %sub, %xor)
})"},
    {"broadcast", R"(HloModule m
ENTRY %e {
  %x = f32[3] parameter(0)
  ROOT %b = f32[2,3,4] broadcast(%x), dimensions={1}
})"},
    {"concatenate", R"(HloModule m
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %y = f32[2,5] parameter(1)
  ROOT %c = f32[2,8] concatenate(%x, %y), dimensions={1}
})"},
    {"dynamic-slice", R"(HloModule m
ENTRY %e {
  %x = f32[8,8] parameter(0)
  %i = s32[] parameter(1)
  %j = s32[] parameter(2)
  ROOT %ds = f32[2,4] dynamic-slice(%x, %i, %j), dynamic_slice_sizes={2,4}
})"},
    {"dynamic-update-slice", R"(HloModule m
ENTRY %e {
  %x = f32[8,8] parameter(0)
  %u = f32[2,4] parameter(1)
  %i = s32[] parameter(2)
  ROOT %dus = f32[8,8] dynamic-update-slice(%x, %u, %i, %i)
})"},
    {"gather", R"(HloModule m
ENTRY %e {
  %operand = f32[5,4] parameter(0)
  %indices = s32[3,1] parameter(1)
  ROOT %g = f32[3,4] gather(%operand, %indices), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true
})"},
    {"pad", R"(HloModule m
ENTRY %e {
  %x = f32[4,4] parameter(0)
  %v = f32[] constant(0)
  ROOT %p = f32[9,3] pad(%x, %v), padding=1_1_1x0_-1
})"},
    {"reshape", R"(HloModule m
ENTRY %e {
  %x = f32[2,6] parameter(0)
  ROOT %r = f32[3,4] reshape(%x)
})"},
    {"reverse", R"(HloModule m
ENTRY %e {
  %x = f32[2,6] parameter(0)
  ROOT %r = f32[2,6] reverse(%x), dimensions={0,1}
})"},
    {"scatter", R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %operand = f32[5,4] parameter(0)
  %indices = s32[3,1] parameter(1)
  %updates = f32[3,4] parameter(2)
  ROOT %s = f32[5,4] scatter(%operand, %indices, %updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
})"},
    {"slice", R"(HloModule m
ENTRY %e {
  %x = f32[8,10] parameter(0)
  ROOT %s = f32[4,4] slice(%x), slice={[0:4], [2:10:2]}
})"},
    {"transpose", R"(HloModule m
ENTRY %e {
  %x = f32[2,3,4] parameter(0)
  ROOT %t = f32[4,2,3] transpose(%x), dimensions={2,0,1}
})"},
    {"dot", R"(HloModule m
ENTRY %e {
  %l = f32[2,3,4] parameter(0)
  %r = f32[2,4,5] parameter(1)
  ROOT %d = f32[2,3,5] dot(%l, %r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={default,default}
})"},
    {"reduce", R"(HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[4] reduce(%x, %z), dimensions={1}, to_apply=%sum
})"},
    {"reduce-window", R"(HloModule m
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
ENTRY %e {
  %x = f32[4,6] parameter(0)
  %z = f32[] constant(-inf)
  ROOT %r = f32[2,3] reduce-window(%x, %z), window={size=2x2 stride=2x2}, to_apply=%max
})"},
    {"convolution", R"(HloModule m
ENTRY %e {
  %x = f32[1,4,4,2] parameter(0)
  %k = f32[2,2,1,4] parameter(1)
  ROOT %c = f32[1,2,2,4] convolution(%x, %k), window={size=2x2 stride=2x1 pad=0_0x1_-1 rhs_dilate=1x2}, dim_labels=b01f_01io->b01f, feature_group_count=2
})"},
    {"sort", R"(HloModule m
%less (a: f32[], b: f32[], i: s32[], j: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %i = s32[] parameter(2)
  %j = s32[] parameter(3)
  ROOT %lt = pred[] compare(%a, %b), direction=LT, type=TOTALORDER
}
ENTRY %e {
  %k = f32[3,5] parameter(0)
  %v = s32[3,5] parameter(1)
  ROOT %s = (f32[3,5], s32[3,5]) sort(%k, %v), dimensions={1}, is_stable=true, to_apply=%less
})"},
    {"select-and-scatter", R"(HloModule m
%ge (a: f32[], b: f32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[4,6] parameter(0)
  %g = f32[2,3] parameter(1)
  %z = f32[] constant(0)
  ROOT %r = f32[4,6] select-and-scatter(%x, %g, %z), window={size=2x2 stride=2x2}, select=%ge, scatter=%add
})"},
    {"batch-norm", R"(HloModule m
ENTRY %e {
  %x = f32[2,3,4] parameter(0)
  %s = f32[3] parameter(1)
  %t = (f32[2,3,4], f32[3], f32[3]) batch-norm-training(%x, %s, %s), epsilon=0.001, feature_index=1
  %i = f32[2,3,4] batch-norm-inference(%x, %s, %s, %s, %s), epsilon=1e-05, feature_index=1
  %g = (f32[2,3,4], f32[3], f32[3]) batch-norm-grad(%x, %s, %s, %s, %i), epsilon=0, feature_index=1
  ROOT %r = ((f32[2,3,4], f32[3], f32[3]), (f32[2,3,4], f32[3], f32[3])) tuple(%t, %g)
})"},
    {"map-topk-dims-domain", R"(HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %x = f32[2,4] parameter(0)
  %n = s32[] parameter(1)
  %m = f32[2,4] map(%x, %x), dimensions={0,1}, to_apply=%add
  %k = (f32[2,3], s32[2,3]) topk(%m), k=3, largest=false
  %g = s32[] get-dimension-size(%x), dimensions={1}
  %d = f32[2,<=4] set-dimension-size(%x, %n), dimensions={1}
  %dom = f32[2,4] domain(%x), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  %b = f32[2,4] collective-broadcast(%dom), channel_id=1, replica_groups={{0,1}}
  ROOT %t = ((f32[2,3], s32[2,3]), s32[], f32[2,<=4], f32[2,4]) tuple(%k, %g, %d, %b)
})"},
    {"ragged-and-complex", R"(HloModule m, num_partitions=2
ENTRY %e {
  %x = f32[4,2] parameter(0)
  %w = f32[3,2,5] parameter(1)
  %g = s32[3] parameter(2)
  %d = f32[4,5] ragged-dot(%x, %w, %g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  %o = s32[2] parameter(3)
  %a = f32[4,2] ragged-all-to-all(%x, %x, %o, %o, %o, %o), replica_groups={{0,1}}
  %bits = u32[4,2] parameter(4)
  %q = s8[4,2] stochastic-convert(%x, %bits)
  %z = c64[4,2] complex(%x, %x)
  %re = f32[4,2] real(%z)
  %im = f32[4,2] imag(%z)
  ROOT %t = (f32[4,5], f32[4,2], s8[4,2], f32[4,2], f32[4,2]) tuple(%d, %a, %q, %re, %im)
})"},
    {"bitcast", R"(HloModule m
ENTRY %e {
  %x = f32[2,3] parameter(0)
  %r = f32[6] bitcast(%x)
  ROOT %b = u8[24] bitcast(%r)
})"},
    {"async", R"(HloModule m, num_partitions=2
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%neg (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
ENTRY %e {
  %p = f32[4] parameter(0)
  %rs = f32[4] all-reduce-start(%p), replica_groups={{0,1}}, to_apply=%sum
  %rd = f32[4] all-reduce-done(%rs)
  %gs = (f32[4], f32[8]) all-gather-start(%rd), replica_groups={{0,1}}, dimensions={0}
  %gd = f32[8] all-gather-done(%gs)
  %ps = (f32[8], f32[8]) collective-permute-start(%gd), channel_id=1, source_target_pairs={{0,1},{1,0}}
  %pd = f32[8] collective-permute-done(%ps)
  %cs = (f32[8], f32[8], u32[]) copy-start(%pd)
  %cd = f32[8] copy-done(%cs)
  %as = ((f32[4]), f32[4], s32[]) async-start(%p), calls=%neg, async_execution_thread="main"
  %au = ((f32[4]), f32[4], s32[]) async-update(%as)
  %ad = f32[4] async-done(%au), calls=%neg
  ROOT %t = (f32[8], f32[4]) tuple(%cd, %ad)
})"},
    {"fusion", R"(HloModule m
%fused (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %y = f32[4] parameter(1)
  ROOT %m = f32[4] multiply(%x, %y)
}
ENTRY %e {
  %p = f32[4] parameter(0)
  ROOT %f = f32[4] fusion(%p, %p), kind=kLoop, calls=%fused
})"},
    {"tokens", R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  %t0 = token[] after-all()
  %t1 = token[] after-all(%t0, %t0)
  %d = f32[4] add-dependency(%p, %t1)
  %b = (f32[4], token[]) opt-barrier((f32[4], token[]) tuple(%d, %t1))
  ROOT %g = f32[4] get-tuple-element(%b), index=0
})"},
    {"bitcast_convert", R"(HloModule m
ENTRY %e {
  %p = f32[3] parameter(0)
  %b = u8[3,4] bitcast-convert(%p)
  %w = f32[3] bitcast-convert(%b)
  ROOT %s = s32[3] bitcast-convert(%w)
})"},
    {"random", R"(HloModule m
ENTRY %e {
  %a = f32[] constant(0)
  %b = f32[] constant(1)
  %u = f32[2,3] rng(%a, %b), distribution=rng_uniform
  %st = u64[2] rng-get-and-update-state(), delta=6
  %g = (u64[2], u32[2,3]) rng-bit-generator(%st), algorithm=rng_philox
  ROOT %t = ((u64[2], u32[2,3]), f32[2,3]) tuple(%g, %u)
})"},
    {"linalg", R"(HloModule m
ENTRY %e {
  %a = f32[2,3,3] parameter(0)
  %b = f32[2,3,5] parameter(1)
  %x = c64[4,8] parameter(2)
  %c = f32[2,3,3] cholesky(%a), lower=true
  %s = f32[2,3,5] triangular-solve(%c, %b), left_side=true, lower=true, unit_diagonal=false, transpose_a=TRANSPOSE
  %f = c64[4,8] fft(%x), fft_type=FFT, fft_length={8}
  %r = f32[4,14] fft(%f), fft_type=IRFFT, fft_length={14}
  ROOT %t = (f32[2,3,5], f32[4,14]) tuple(%s, %r)
})"},
    {"transfers", R"(HloModule m
ENTRY %e {
  %p = f32[4] parameter(0)
  %t = token[] after-all()
  %s = (f32[4], u32[], token[]) send(%p, %t), channel_id=3, is_host_transfer=true
  %sd = token[] send-done(%s), channel_id=3, is_host_transfer=true
  %r = (f32[4], u32[], token[]) recv(%sd), channel_id=4
  %rd = (f32[4], token[]) recv-done(%r), channel_id=4
  %rt = token[] get-tuple-element(%rd), index=1
  %i = ((f32[2], s32[]), token[]) infeed(%rt), infeed_config="cfg"
  %it = token[] get-tuple-element(%i), index=1
  ROOT %o = token[] outfeed(%p, %it), outfeed_shape=f32[4]{0}, outfeed_config="out"
})"},
    {"call", R"(HloModule m
%f (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
ENTRY %e {
  %p = f32[4] parameter(0)
  ROOT %c = f32[4] call(%p), to_apply=%f
})"},
    {"conditional", R"(HloModule m
%t (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%x)
}
%f (y: f32[4]) -> f32[4] {
  %y = f32[4] parameter(0)
  ROOT %c = f32[4] copy(%y)
}
ENTRY %e {
  %pred = pred[] parameter(0)
  %p = f32[4] parameter(1)
  ROOT %c = f32[4] conditional(%pred, %p, %p), true_computation=%t, false_computation=%f
})"},
    {"custom-call", R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[4,8] parameter(0)
  ROOT %s = f32[4,8] custom-call(%p), custom_call_target="Sharding", sharding={devices=[2,1]0,1}, backend_config="unspecified_dims=[1]"
})"},
    {"get-tuple-element", R"(HloModule m
ENTRY %e {
  %p = (f32[4], (s32[], pred[])) parameter(0)
  %inner = (s32[], pred[]) get-tuple-element(%p), index=1
  ROOT %g = pred[] get-tuple-element(%inner), index=1
})"},
    {"tuple", R"(HloModule m
ENTRY %e {
  %a = f32[4] parameter(0)
  %b = s32[] parameter(1)
  %empty = () tuple()
  %inner = (s32[], ()) tuple(%b, %empty)
  ROOT %t = (f32[4], (s32[], ())) tuple(%a, (s32[], ()) %inner)
})"},
    {"while", R"(HloModule m
%cond (s: (s32[], f32[4])) -> pred[] {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[4] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %v1 = f32[4] add(%v, %v)
  ROOT %r = (s32[], f32[4]) tuple(%i1, %v1)
}
ENTRY %e {
  %init = (s32[], f32[4]) parameter(0)
  ROOT %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
})"},
    {"all-gather", R"(HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[2,8] parameter(0)
  ROOT %ag = f32[8,8] all-gather(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
})"},
    {"all-reduce", R"(HloModule m, num_partitions=4
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %p = f32[8] parameter(0)
  ROOT %ar = f32[8] all-reduce(%p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=%sum
})"},
    {"all-to-all", R"(HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[8,4] parameter(0)
  ROOT %a2a = f32[8,4] all-to-all(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}
})"},
    {"collective-permute", R"(HloModule m, num_partitions=2
ENTRY %e {
  %p = f32[8] parameter(0)
  ROOT %cp = f32[8] collective-permute(%p), channel_id=1, source_target_pairs={{0,1},{1,0}}
})"},
    {"reduce-scatter", R"(HloModule m, num_partitions=4
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %p = f32[8,4] parameter(0)
  ROOT %rs = f32[2,4] reduce-scatter(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true, to_apply=%sum
})"},
    {"mapreduce", R"(HloModule m, mesh={clients=2}
%loss {
  %w = f32[2] parameter(0)
  %x = f32[2] parameter(1)
  ROOT %d = f32[] dot(%w, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
ENTRY %e {
  %w = f32[2] parameter(0)
  %data = f32[4,2] parameter(1)
  %b = f32[4,2] mapreduce.broadcast(%w), placement=clients
  %l = f32[4] mapreduce.map(%b, %data), placement=clients, to_apply=%loss
  %s = f32[] mapreduce.sum(%l), placement=clients
  %m = f32[] mapreduce.mean(%l), placement=clients
  ROOT %t = (f32[], f32[]) tuple(%s, %m)
})"},
    {"shard_map", R"(HloModule m, mesh={x=2, y=2}
%body {
  %a = f32[2,4]{V:x} parameter(0)
  %b = f32[4]{V:x,y} parameter(1)
  %s = f32[2,4] psum(%a), axes={x}
  %v = f32[2,4]{V:y} pbroadcast(%s), axes={y}
  %mx = f32[2,4]{V:x} pmax(%a), axes={y}
  %mn = f32[2,4]{V:x} pmin(%a), axes={y}
  %g = f32[4,4]{V:x} all_gather(%a), axes={x}, dimension=0, tiled=true
  %gi = f32[2,2,4] all_gather_invariant(%a), axes={x}, dimension=0
  %rs = f32[1,4]{V:x} psum_scatter(%a), axes={x}, dimension=0, tiled=true
  %sc = f32[2,2]{V:y} pscatter(%s), axes={y}, dimension=1, tiled=true
  %t = f32[4,2]{V:x} all_to_all(%a), axes={x}, split_dimension=1, concat_dimension=0, tiled=true
  %p = f32[4]{V:x,y} ppermute(%b), axes={x,y}, pairs={{0,1},{1,2},{2,3},{3,0}}
  %i = s32[]{V:x,y} axis_index(), axes={x,y}
  ROOT %r = (f32[2,4], f32[4]) tuple(%s, %p)
}
ENTRY %e {
  %x = f32[4,4] parameter(0)
  %y = f32[16] parameter(1)
  ROOT %sm = (f32[2,4], f32[16]) shard_map(%x, %y), mesh={x=2, y=2}, in_specs={P(x), P((x,y))}, out_specs={P(), P((x,y))}, to_apply=%body
})"},
};

class OpRoundTripTest : public ::testing::TestWithParam<OpSnippet> {};

TEST_P(OpRoundTripTest, ParsesVerifiesAndRoundTrips) {
  const OpSnippet& snippet = GetParam();
  auto module = ParseRoundTrip(snippet.text);
  EXPECT_NE(module, nullptr) << snippet.opcode;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, OpRoundTripTest, ::testing::ValuesIn(kOpSnippets),
                         [](const ::testing::TestParamInfo<OpSnippet>& info) {
                           std::string name = info.param.opcode;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(OpRoundTripCoverageTest, EveryOpcodeHasASnippet) {
  std::set<Opcode> covered;
  for (const OpSnippet& snippet : kOpSnippets) {
    auto module = ParseModule(snippet.text);
    ASSERT_THAT(module, IsOk()) << snippet.opcode;
    for (Computation* c : (*module)->computations()) {
      for (Instruction* i : c->instructions()) covered.insert(i->opcode());
    }
  }
  for (int i = 0; i < kNumOpcodes; ++i) {
    EXPECT_TRUE(covered.count(static_cast<Opcode>(i)))
        << "no round-trip snippet uses '" << OpcodeName(static_cast<Opcode>(i)) << "'";
  }
}

}  // namespace
}  // namespace sharc::hlo
