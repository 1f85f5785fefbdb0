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

// convolution: batch and output feature pass through, the input feature is
// a reduction factor like dot's contracting dim; a unit window is pointwise.
TEST(ShardingRuleTest, PointwiseConvolutionIsADot) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,5,5,4] parameter(0)
  k = f32[1,1,4,6] parameter(1)
  ROOT c = f32[8,5,5,6] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})",
                   "c"),
            "([i,k,l,m],[_,_,m,j])->([i,k,l,j]) {m:reduction}");
}

// A real window reads neighbours: each tensor's spatial dim is its own
// need-replication factor (no halo exchange in sharc).
// A window no wider than the result: input and result rows correspond
// (one permutation factor, exchanged by halos); the kernel's stay whole.
TEST(ShardingRuleTest, ConvolutionWindowsCarrySpatialSplitsToTheResult) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,4,5,5] parameter(0)
  k = f32[6,4,3,3] parameter(1)
  ROOT c = f32[8,6,3,3] convolution(x, k), window={size=3x3}, dim_labels=bf01_oi01->bf01
})",
                   "c"),
            "([i,o,k,m],[j,o,l,n])->([i,j,k,m]) {k:permutation, l:need-replication, "
            "m:permutation, n:need-replication, o:reduction}");
}

// A window wider than the result (a weight gradient: the kernel is the
// image) keeps every spatial dim whole.
TEST(ShardingRuleTest, WeightGradientWindowsKeepSpatialDimsWhole) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,4,5,5] parameter(0)
  k = f32[6,4,4,4] parameter(1)
  ROOT c = f32[8,6,2,2] convolution(x, k), window={size=4x4}, dim_labels=bf01_oi01->bf01
})",
                   "c"),
            "([i,q,k,n],[j,q,l,o])->([i,j,m,p]) {k:need-replication, l:need-replication, "
            "m:need-replication, n:need-replication, o:need-replication, p:need-replication, "
            "q:reduction}");
}

// One window over the whole input (a 1x1 weight gradient): each spatial
// dim is a contraction of input and kernel.
TEST(ShardingRuleTest, WholeInputWindowsAreContractions) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,4,5,5] parameter(0)
  k = f32[6,4,5,5] parameter(1)
  ROOT c = f32[8,6,1,1] convolution(x, k), window={size=5x5}, dim_labels=bf01_oi01->bf01
})",
                   "c"),
            "([i,m,k,l],[j,m,k,l])->([i,j,_,_]) {k:reduction, l:reduction, m:reduction}");
}

// Feature groups: the input features are [group, per-group input] (the
// latter contracted with the kernel's input feature), the kernel's and the
// result's output features [group, per-group output]; a split along the
// groups gives each device its own groups.
TEST(ShardingRuleTest, GroupedConvolutionSplitsAlongGroups) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,5,4] parameter(0)
  k = f32[1,2,6] parameter(1)
  ROOT c = f32[8,5,6] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2
})",
                   "c"),
            "([i,l,jm],[_,m,jk])->([i,l,jk]) {m:reduction}");
  // Depthwise: one input feature per group, no contraction left.
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,5,4] parameter(0)
  k = f32[3,1,4] parameter(1)
  ROOT c = f32[8,3,4] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=4
})",
                   "c"),
            "([i,k,j],[l,_,j])->([i,k,j]) {k:permutation, l:need-replication}");
  // Batch groups: the input batch is [group, per-group batch].
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[8,5,4] parameter(0)
  k = f32[1,4,6] parameter(1)
  ROOT c = f32[4,5,6] convolution(x, k), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2
})",
                   "c"),
            "([ji,l,m],[_,m,jk])->([i,l,jk]) {m:reduction}");
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

// cholesky, triangular-solve and fft: the leading batch dims pass through;
// every matrix or signal dim stays whole on each device.
TEST(ShardingRuleTest, LinalgOpsSplitOnlyTheirBatchDims) {
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[4,3,3] parameter(0)
  ROOT c = f32[4,3,3] cholesky(a), lower=true
})",
                   "c"),
            "([i,j,k])->([i,l,m]) {j:need-replication, k:need-replication, "
            "l:need-replication, m:need-replication}");
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  a = f32[4,3,3] parameter(0)
  b = f32[4,3,2] parameter(1)
  ROOT x = f32[4,3,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
})",
                   "x"),
            "([i,j,k],[i,l,m])->([i,n,o]) {j:need-replication, k:need-replication, "
            "l:need-replication, m:need-replication, n:need-replication, o:need-replication}");
  EXPECT_EQ(RuleOf(R"(HloModule m
ENTRY e {
  x = f32[4,2,8] parameter(0)
  ROOT f = c64[4,2,5] fft(x), fft_type=RFFT, fft_length={8}
})",
                   "f"),
            "([i,j,k])->([i,j,l]) {k:need-replication, l:need-replication}");
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
