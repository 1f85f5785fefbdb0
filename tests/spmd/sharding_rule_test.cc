// The factor rules: every op has one, and representative ops state the
// factors Shardy would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/sharding_rule.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

TEST(ShardingRuleTest, EveryOpcodeHasARule) {
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    hlo::Opcode op = static_cast<hlo::Opcode>(i);
    EXPECT_TRUE(HasShardingRule(op)) << "op '" << hlo::OpcodeName(op) << "' has no sharding rule";
  }
}

// The rule of the instruction named `name` in `text`.
std::string RuleOf(const std::string& text, const std::string& name) {
  auto module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) return std::string(module.status().message());
  for (const hlo::Computation* comp : (*module)->computations()) {
    if (const hlo::Instruction* inst = comp->FindInstruction(name)) {
      absl::StatusOr<ShardingRule> rule = GetShardingRule(*inst);
      return rule.ok() ? rule->ToString() : std::string(rule.status().message());
    }
  }
  return "not found";
}

TEST(ShardingRuleTest, DotHasAReductionFactor) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[8,4] parameter(0)
  b = f32[4,16] parameter(1)
  ROOT d = f32[8,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                   "d"),
            "([i,k],[k,j])->([i,j]) {k:reduction}");
}

TEST(ShardingRuleTest, BatchedDotSharesTheBatchFactor) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[2,8,4] parameter(0)
  b = f32[2,4,16] parameter(1)
  ROOT d = f32[2,8,16] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})",
                   "d"),
            "([i,j,l],[i,l,k])->([i,j,k]) {l:reduction}");
}

TEST(ShardingRuleTest, ReshapeGetsCompoundFactors) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[4,6] parameter(0)
  ROOT r = f32[8,3] reshape(a)
})",
                   "r"),
            "([i,jk])->([ij,k])");
}

TEST(ShardingRuleTest, ReduceMarksReducedDims) {
  EXPECT_EQ(RuleOf(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce(a, z), dimensions={0}, to_apply=add
})",
                   "r"),
            "([i,j],[])->([j]) {i:reduction}");
}

TEST(ShardingRuleTest, BroadcastNewDimsAppearOnlyInTheResult) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT b = f32[3,4] broadcast(a), dimensions={1}
})",
                   "b"),
            "([j])->([i,j])");
}

TEST(ShardingRuleTest, DynamicSliceNeedsReplicationOnSlicedDims) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[8,6] parameter(0)
  i = s32[] constant(1)
  ROOT s = f32[2,6] dynamic-slice(a, i, i), dynamic_slice_sizes={2,6}
})",
                   "s"),
            "([i,j],[],[])->([i,j]) {i:need-replication}");
}

TEST(ShardingRuleTest, ControlFlowIsDataFlow) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  ROOT t = (f32[8]) tuple(a)
})",
                   "t"),
            "data-flow");
}

}  // namespace
}  // namespace sharc::spmd
