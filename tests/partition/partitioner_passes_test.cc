// The partitioner's three passes, each on its own: InsertReshards makes
// every change of layout explicit, ReshardToCollectives turns each reshard
// into global-view collective steps, Localize turns the explicit global
// module into the per-device program. Passes 1 and 2 must keep the global
// module's values (their ops are the identity on global values); the whole
// pipeline is checked against the interpreter by the conformance and random
// tests.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "hlo/eval/interpreter.h"
#include "hlo/ops/spmd_global_view.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/insert_reshards.h"
#include "spmd/partition/localize.h"
#include "spmd/partition/partitioner.h"
#include "spmd/partition/reshard_to_collectives.h"
#include "spmd/propagation.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

namespace fs = std::filesystem;
using hlo::Instruction;

std::unique_ptr<hlo::Module> Parse(const std::string& text) {
  auto m = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

std::string TargetOf(const Instruction& inst) {
  return inst.opcode() == hlo::Opcode::kCustomCall ? inst.attr_string("custom_call_target") : "";
}

int CountTarget(const hlo::Module& m, std::string_view target) {
  int n = 0;
  for (const hlo::Computation* c : m.computations())
    for (const Instruction* i : c->instructions()) n += TargetOf(*i) == target;
  return n;
}

// The global-view steps from `inst` back to the first non-step value.
std::vector<std::string> StepChain(const Instruction* inst) {
  std::vector<std::string> chain;
  while (inst->opcode() == hlo::Opcode::kCustomCall &&
         hlo::IsSpmdGlobalViewTarget(TargetOf(*inst))) {
    chain.insert(chain.begin(), TargetOf(*inst));
    inst = inst->operand(0);
  }
  return chain;
}

TEST(InsertReshardsTest, ContractingDotBecomesPartialThenReduceScatter) {
  auto m = Parse(R"(HloModule m, num_partitions=8
ENTRY %main {
  %lhs = f32[128,64] parameter(0), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
  %rhs = f32[64,256] parameter(1), sharding={devices=[8,1]0,1,2,3,4,5,6,7}
  ROOT %dot = f32[128,256] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[1,8]0,1,2,3,4,5,6,7}
})");
  ASSERT_OK_AND_ASSIGN(auto out, InsertReshards(*m));
  const Instruction* root = out->entry()->root();
  EXPECT_EQ(root->name(), "dot");
  EXPECT_EQ(TargetOf(*root), hlo::kSpmdReduceScatter);
  EXPECT_EQ(root->attr_string("backend_config"), "{{0,1,2,3,4,5,6,7}}");
  EXPECT_EQ(root->operand(0)->name(), "dot.partial");
  EXPECT_EQ(root->operand(0)->opcode(), hlo::Opcode::kDot);
  // The operands already have the layout the local dot consumes.
  EXPECT_EQ(CountTarget(*out, hlo::kSpmdReshard), 0) << out->ToString();
  EXPECT_OK(hlo::VerifyModule(*out));
}

TEST(InsertReshardsTest, MismatchedOperandGetsOneReshard) {
  auto m = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %x = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  %y = f32[8,6] parameter(1), sharding={devices=[1,2]0,1}
  ROOT %sum = f32[8,6] add(%x, %y), sharding={devices=[2,1]0,1}
})");
  ASSERT_OK_AND_ASSIGN(auto out, InsertReshards(*m));
  const Instruction* sum = out->entry()->root();
  ASSERT_EQ(sum->opcode(), hlo::Opcode::kAdd) << out->ToString();
  EXPECT_EQ(sum->operand(0)->name(), "x");
  EXPECT_EQ(TargetOf(*sum->operand(1)), hlo::kSpmdReshard);
  EXPECT_EQ(sum->operand(1)->operand(0)->name(), "y");
  EXPECT_EQ(sum->operand(1)->sharding()->ToString(), "{devices=[2,1]0,1}");
  EXPECT_EQ(CountTarget(*out, hlo::kSpmdReshard), 1);
}

TEST(InsertReshardsTest, OwnShardingDifferentFromWhatTheOpMakesEndsInANamedReshard) {
  // A reduce over the split dim leaves a replicated result; its own sharding
  // splits it again.
  auto m = Parse(R"(HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[8,6] parameter(0), sharding={devices=[2,1]0,1}
  %zero = f32[] constant(0)
  ROOT %r = f32[6] reduce(%x, %zero), dimensions={0}, to_apply=%add, sharding={devices=[2]0,1}
})");
  ASSERT_OK_AND_ASSIGN(auto out, InsertReshards(*m));
  const Instruction* root = out->entry()->root();
  EXPECT_EQ(root->name(), "r");
  EXPECT_EQ(TargetOf(*root), hlo::kSpmdReduceScatter) << out->ToString();
  EXPECT_EQ(root->operand(0)->name(), "r.partial");
}

TEST(ReshardToCollectivesTest, EachKindOfReshardBecomesItsSteps) {
  struct Case {
    std::string from, to;
    std::vector<std::string> steps;
  };
  const std::vector<Case> cases = {
      {"{devices=[4,1]0,1,2,3}", "{replicated}", {"SpmdAllGather"}},
      {"{replicated}", "{devices=[1,4]0,1,2,3}", {"SpmdAllSlice"}},
      {"{devices=[4,1]0,1,2,3}", "{devices=[1,4]0,1,2,3}", {"SpmdAllToAll"}},
      {"{devices=[4,1]0,1,2,3}", "{devices=[4,1]0,2,1,3}", {"SpmdCollectivePermute"}},
      {"{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", "{devices=[2,2]0,1,2,3}",
       {"SpmdAllSlice"}},
      // Half of dim 0's tiles move to dim 1.
      {"{devices=[4,1]0,1,2,3}", "{devices=[2,2]0,1,2,3}", {"SpmdAllToAll"}},
      {"{devices=[4,1]0,1,2,3}", "{devices=[2,2]0,2,1,3}", {"SpmdAllToAll", "SpmdCollectivePermute"}},
      {"{devices=[2,2]0,1,2,3}", "{devices=[1,4]0,1,2,3}", {"SpmdAllToAll", "SpmdCollectivePermute"}},
      // Refining a partially replicated layout whose new tiles sit on other
      // devices: slice within the old tiles, then permute (XLA's way).
      {"{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}", "{devices=[2,2]0,1,2,3}",
       {"SpmdAllSlice", "SpmdCollectivePermute"}},
      {"{devices=[4,1]0,1,2,3}", "{maximal device=0}", {"SpmdAllGather"}},
      {"{devices=[4,1]0,1,2,3}", "{devices=[4,1]0,1,2,3}", {}},
  };
  for (const Case& c : cases) {
    auto m = Parse(absl::StrCat(R"(HloModule m, num_partitions=4
ENTRY %main {
  %x = f32[8,8] parameter(0), sharding=)", c.from, R"(
  ROOT %out = f32[8,8] custom-call(%x), custom_call_target="SpmdReshard", sharding=)", c.to, R"(
})"));
    ASSERT_NE(m, nullptr);
    ASSERT_OK(ReshardToCollectives(*m));
    EXPECT_EQ(CountTarget(*m, hlo::kSpmdReshard), 0);
    const Instruction* root = m->entry()->root();
    EXPECT_EQ(absl::StrJoin(StepChain(root), ","), absl::StrJoin(c.steps, ","))
        << c.from << " -> " << c.to << "\n" << m->ToString();
    if (!c.steps.empty()) {
      EXPECT_EQ(root->name(), "out");
    }
    EXPECT_OK(hlo::VerifyModule(*m));
  }
}

TEST(ReshardToCollectivesTest, TuplesReshardElementByElement) {
  auto m = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %x = (f32[4,4], f32[6]) parameter(0), sharding={{devices=[2,1]0,1}, {replicated}}
  ROOT %out = (f32[4,4], f32[6]) custom-call(%x), custom_call_target="SpmdReshard", sharding={{replicated}, {replicated}}
})");
  ASSERT_OK(ReshardToCollectives(*m));
  const Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), hlo::Opcode::kTuple) << m->ToString();
  EXPECT_EQ(TargetOf(*root->operand(0)), hlo::kSpmdAllGather);
  EXPECT_EQ(root->operand(1)->opcode(), hlo::Opcode::kGetTupleElement);
}

TEST(ReshardToCollectivesTest, ManualToTiledIsAnError) {
  auto m = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %x = f32[4] parameter(0), sharding={manual}
  ROOT %out = f32[4] custom-call(%x), custom_call_target="SpmdReshard", sharding={devices=[2]0,1}
})");
  absl::Status st = ReshardToCollectives(*m);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("manual region"), std::string::npos) << st;
  EXPECT_NE(st.message().find("out"), std::string::npos) << st;
}

// A custom-call inside a manual region, with a tuple of manual results read
// by get-tuple-element, and a variadic reduce there, run on each device's own
// values: no reshard to {replicated} (which would leave the region).
TEST(InsertReshardsTest, OpsOfAManualRegionKeepTheirPerDeviceOperands) {
  auto m = Parse(R"(HloModule m, num_partitions=4
%or_pair (a: u32[], b: u32[], c: u32[], d: u32[]) -> (u32[], u32[]) {
  %a = u32[] parameter(0)
  %b = u32[] parameter(1)
  %c = u32[] parameter(2)
  %d = u32[] parameter(3)
  %ac = u32[] or(%a, %c)
  %bd = u32[] or(%b, %d)
  ROOT %t = (u32[], u32[]) tuple(%ac, %bd)
}
ENTRY %main {
  %x = f32[8,2] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %m = f32[2,2] custom-call(%x), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %t = (f32[2,2], f32[1]) custom-call(%m), custom_call_target="my_kernel", sharding={{manual}, {manual}}
  %g = f32[2,2] get-tuple-element(%t), index=0, sharding={manual}
  %y = f32[8,2] custom-call(%g), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]0,1,2,3}
  %u = u32[2,2] parameter(1), sharding={manual}
  %zero = u32[] constant(0), sharding={manual}
  %r = (u32[2], u32[2]) reduce(%u, %u, %zero, %zero), dimensions={1}, to_apply=%or_pair, sharding={{manual}, {manual}}
  %r0 = u32[2] get-tuple-element(%r), index=0, sharding={manual}
  ROOT %out = (f32[8,2], u32[2]) tuple(%y, %r0), sharding={{devices=[4,1]0,1,2,3}, {manual}}
})");
  ASSERT_TRUE(m);
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*m));
  ASSERT_OK(hlo::VerifyModule(*local));
  EXPECT_EQ(CountTarget(*local, hlo::kSpmdReshard), 0) << local->ToString();
  for (const hlo::Computation* c : local->computations()) {
    for (const Instruction* i : c->instructions()) {
      EXPECT_NE(i->opcode(), hlo::Opcode::kAllGather) << local->ToString();
    }
  }
  const Instruction* t = local->entry()->FindInstruction("t");
  const Instruction* r = local->entry()->FindInstruction("r");
  ASSERT_TRUE(t && r) << local->ToString();
  EXPECT_EQ(t->shape().ToString(), "(f32[2,2], f32[1])");
  EXPECT_EQ(t->operand(0)->shape().ToString(), "f32[2,2]");
  EXPECT_EQ(r->operand(0)->opcode(), hlo::Opcode::kParameter);
  EXPECT_EQ(local->entry()->root()->shape().ToString(), "(f32[2,2], u32[2])");
}

// SPMDShardToFullShape keeps each device's data and reinterprets it under
// the result's sharding, partial manual ones too: a chain from a manual
// value through a partially manual one back to the parameter's tiling is
// the identity on every device (no collective, no data moved).
TEST(LocalizeTest, ShardToFullThroughPartialManualKeepsEachDevicesData) {
  auto m = Parse(R"(HloModule m, num_partitions=4
ENTRY %main {
  %p = s32[4,4] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %m0 = s32[2,2] custom-call(%p), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %m1 = s32[4,2] custom-call(%m0), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1,2]0,1,2,3 last_tile_dims={manual}}
  ROOT %out = s32[4,4] custom-call(%m1), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,2]0,1,2,3}
})");
  ASSERT_TRUE(m);
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*m));
  ASSERT_OK(hlo::VerifyModule(*local));
  const Instruction* v = local->entry()->root();
  while (v->opcode() == hlo::Opcode::kReshape || v->opcode() == hlo::Opcode::kCopy) v = v->operand(0);
  EXPECT_EQ(v->opcode(), hlo::Opcode::kParameter) << local->ToString();
  EXPECT_EQ(local->entry()->root()->shape().ToString(), "s32[2,2]");
}

TEST(LocalizeTest, GlobalViewStepsBecomePerDeviceCollectives) {
  auto m = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %p = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  %g = f32[8,4] custom-call(%p), custom_call_target="SpmdAllGather", sharding={replicated}
  ROOT %s = f32[8,4] custom-call(%g), custom_call_target="SpmdAllSlice", sharding={devices=[1,2]0,1}
})");
  ASSERT_OK_AND_ASSIGN(auto local, Localize(*m, 2));
  ASSERT_OK(hlo::VerifyModule(*local));
  const Instruction* p = local->entry()->FindInstruction("p");
  const Instruction* g = local->entry()->FindInstruction("g");
  const Instruction* s = local->entry()->FindInstruction("s");
  ASSERT_TRUE(p && g && s) << local->ToString();
  EXPECT_EQ(p->shape().ToString(), "f32[4,4]");
  EXPECT_EQ(g->opcode(), hlo::Opcode::kAllGather);
  EXPECT_EQ(g->shape().ToString(), "f32[8,4]");
  EXPECT_EQ(s->opcode(), hlo::Opcode::kDynamicSlice);
  EXPECT_EQ(s->shape().ToString(), "f32[8,2]");
  EXPECT_EQ(local->entry()->root(), s);
}

TEST(LocalizeTest, PartialSumsAreAllReducedOverTheirGroups) {
  auto m = Parse(R"(HloModule m, num_partitions=4
ENTRY %main {
  %a = f32[4,8] parameter(0), sharding={devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}
  %b = f32[8,4] parameter(1), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %d.partial = f32[4,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
  ROOT %d = f32[4,4] custom-call(%d.partial), custom_call_target="SpmdAllReduce", backend_config="{{0,2},{1,3}}", sharding={replicated}
})");
  ASSERT_OK_AND_ASSIGN(auto local, Localize(*m, 4));
  const Instruction* d = local->entry()->root();
  EXPECT_EQ(d->name(), "d");
  EXPECT_EQ(d->opcode(), hlo::Opcode::kAllReduce);
  EXPECT_EQ(d->attr_int_lists("replica_groups"), (hlo::IntListList{{0, 2}, {1, 3}}));
  EXPECT_EQ(d->operand(0)->shape().ToString(), "f32[4,4]");
}

TEST(LocalizeTest, RefusesWhatEarlierPassesShouldHaveRemoved) {
  auto m = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %p = f32[8] parameter(0), sharding={devices=[2]0,1}
  ROOT %r = f32[8] custom-call(%p), custom_call_target="SpmdReshard", sharding={replicated}
})");
  auto local = Localize(*m, 2);
  ASSERT_FALSE(local.ok());
  EXPECT_NE(local.status().message().find("ReshardToCollectives"), std::string::npos);
  EXPECT_NE(local.status().message().find("%r ="), std::string::npos) << local.status();

  auto bad_groups = Parse(R"(HloModule m, num_partitions=2
ENTRY %main {
  %p = f32[8] parameter(0), sharding={replicated}
  ROOT %r = f32[8] custom-call(%p), custom_call_target="SpmdAllReduce", backend_config="{{0,1},{2", sharding={replicated}
})");
  auto bad = Localize(*bad_groups, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("replica groups"), std::string::npos) << bad.status();
}

// Passes 1 and 2 on every conformance case: the module verifies, every
// reshard is gone after pass 2, no step is a no-op, and the global module's
// values are unchanged.
TEST(PartitionerPassesTest, ExplicitModulesKeepTheGlobalValues) {
  fs::path dir = fs::path(SHARC_SHARED_DIR) / "conformance" / "partition";
  // The corpus sits beside the repository (../shared), as in CI.
  ASSERT_TRUE(fs::exists(dir)) << "no conformance corpus at " << dir;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    hlo::ParseOptions options;
    options.filename = entry.path().string();
    auto global = hlo::ParseAndVerifyModule(ss.str(), options);
    ASSERT_TRUE(global.ok()) << global.status();
    ASSERT_OK_AND_ASSIGN(auto explicit_module, InsertReshards(**global));
    ASSERT_OK(hlo::VerifyModule(*explicit_module)) << entry.path();
    ASSERT_OK(ReshardToCollectives(*explicit_module)) << entry.path();
    ASSERT_OK(hlo::VerifyModule(*explicit_module)) << entry.path();
    EXPECT_EQ(CountTarget(*explicit_module, hlo::kSpmdReshard), 0) << entry.path();
    {
      const hlo::Computation* c = explicit_module->entry();
      for (const Instruction* i : c->instructions()) {
        ASSERT_TRUE(i->has_sharding()) << i->name() << " in " << entry.path();
        if (!hlo::IsSpmdGlobalViewTarget(TargetOf(*i)) || TargetOf(*i) == hlo::kSpmdAllReduce ||
            TargetOf(*i) == hlo::kSpmdReduceScatter)
          continue;
        EXPECT_FALSE(*i->sharding() == *i->operand(0)->sharding())
            << "no-op step " << i->name() << " in " << entry.path();
      }
    }
    std::mt19937 rng(7);
    std::vector<hlo::Literal> args;
    for (const Instruction* p : (*global)->entry()->parameters())
      args.push_back(testing_util::RandomLiteral(p->shape(), rng));
    ASSERT_OK_AND_ASSIGN(hlo::Literal want, hlo::Evaluate(**global, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal got, hlo::Evaluate(*explicit_module, args));
    EXPECT_OK(testing_util::CompareLiterals(want, got, entry.path().filename().string()));
    // A module printed between passes is a global program like any other:
    // partitioning it again computes the same values.
    ASSERT_OK_AND_ASSIGN(auto again, PartitionModule(*explicit_module));
    EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(**global, *again, 7))
        << entry.path() << "\n" << again->ToString();
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(PartitionerPassesTest, StopAfterNamesThePasses) {
  EXPECT_EQ(*ParsePartitionStage("insert-reshards"), PartitionOptions::Stage::kInsertReshards);
  EXPECT_EQ(*ParsePartitionStage("reshard-to-collectives"),
            PartitionOptions::Stage::kReshardToCollectives);
  EXPECT_EQ(*ParsePartitionStage("localize"), PartitionOptions::Stage::kLocalize);
  auto bad = ParsePartitionStage("fuse");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("insert-reshards"), std::string::npos);
}

}  // namespace
}  // namespace sharc::spmd
