// Golden tests for sharding propagation through reductions and
// contractions: reduce (single and variadic), reduce-window and dot (batch,
// contracting and free dims, 2-D mesh merges, backward to operands).
// Expected values are what XLA's GSPMD (ShardingPropagation, is_spmd=true)
// produces; see ../shared/reference/xla_gspmd.md Part B. Tiling of reduced or
// contracted dims becomes replication (a subgroup), never plain loss, so the
// device order of the replication groups is checked too.
#include <source_location>
#include <string>
#include <string_view>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/propagation.h"
#include "tests/spmd/propagation_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;

using testing_util::ExpectNoSharding;
using testing_util::ExpectSharding;
using testing_util::FindInstruction;

class DotReducePropagationTest : public testing_util::PropagationTest {};

// --- Reduce. ---

TEST_F(DotReducePropagationTest, ReduceOverDim0TurnsTilingIntoReplication) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_dim0, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %init = f32[] constant(0)
  %r = f32[16] reduce(%p0, %init), dimensions={0}, to_apply=%sum
  ROOT %out = f32[16] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "init");
}

TEST_F(DotReducePropagationTest, ReduceOverDim1KeepsRowGroups) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_dim1, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %init = f32[] constant(0)
  %r = f32[8] reduce(%p0, %init), dimensions={1}, to_apply=%sum
  ROOT %out = f32[8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "init");
}

TEST_F(DotReducePropagationTest, ReduceOverUnshardedDimKeepsTiling) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_unsharded, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,1]2,0,3,1}
  %init = f32[] constant(0)
  %r = f32[8] reduce(%p0, %init), dimensions={1}, to_apply=%sum
  ROOT %out = f32[8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4]2,0,3,1}");
}

TEST_F(DotReducePropagationTest, ReduceToScalarIsReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_all, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %init = f32[] constant(0)
  %r = f32[] reduce(%p0, %init), dimensions={0,1}, to_apply=%sum
  ROOT %out = f32[] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{replicated}");
  ExpectNoSharding(module(), "init");
}

// [2,2,2] over 8 devices reducing the middle dim: the middle tile dim moves
// into the replication group, so device 4*i + 2*j + k sits at (i, k, j).
TEST_F(DotReducePropagationTest, ReduceMiddleDimOn3DMesh) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_3d, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16,4] parameter(0), sharding={devices=[2,2,2]<=[8]}
  %init = f32[] constant(0)
  %r = f32[8,4] reduce(%p0, %init), dimensions={1}, to_apply=%sum
  ROOT %out = f32[8,4] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}");
}

// A partial input: reduced tiling joins the existing replication group.
TEST_F(DotReducePropagationTest, ReducePartialInputGrowsReplication) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_partial, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,2,1]0,1,2,3,4,5,6,7 last_tile_dim_replicate}
  %init = f32[] constant(0)
  %r = f32[8] reduce(%p0, %init), dimensions={1}, to_apply=%sum
  ROOT %out = f32[8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}");
}

TEST_F(DotReducePropagationTest, ReduceBackwardMapsKeptDims) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0)
  %init = f32[] constant(0)
  %r = f32[16] reduce(%c, %init), dimensions={0}, to_apply=%sum
  %hint = f32[16] copy(%r), sharding={devices=[4]1,3,0,2}
  ROOT %out = f32[16] copy(%hint)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4]1,3,0,2}");
  ExpectSharding(module(), "c", "{devices=[1,4]1,3,0,2}");
  ExpectNoSharding(module(), "init");
}

TEST_F(DotReducePropagationTest, ReduceBackwardKeepsReplicationSubgroup) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_bwd_partial, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0)
  %init = f32[] constant(0)
  %r = f32[8] reduce(%c, %init), dimensions={1}, to_apply=%sum
  %hint = f32[8] copy(%r), sharding={devices=[2,2]0,2,1,3 last_tile_dim_replicate}
  ROOT %out = f32[8] copy(%hint)
}
)"));
  ExpectSharding(module(), "c", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
}

// Every output of a variadic reduce gets the same sharding; the second input
// (an iota) then gets the output's sharding merged with the first input's,
// which here is the full 2x2 tiling.
//
// XLA's backward rule for a reduce user merges each other input's sharding
// into the mapped-back user sharding; only the destination (here the [2,1,2]
// partial sharding) must be partially replicated. [2,2]0,1,2,3 is compatible
// with rows {0,1},{2,3}, so %idx gets {devices=[2,2]0,1,2,3}.
TEST_F(DotReducePropagationTest, VariadicReduceSharesShardingAndMergesInputs) {
  ASSERT_TRUE(Run(R"(
HloModule reduce_variadic, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%argmax (lv: f32[], li: s32[], rv: f32[], ri: s32[]) -> (f32[], s32[]) {
  %lv = f32[] parameter(0)
  %li = s32[] parameter(1)
  %rv = f32[] parameter(2)
  %ri = s32[] parameter(3)
  %gt = pred[] compare(%lv, %rv), direction=GT
  %v = f32[] select(%gt, %lv, %rv)
  %i = s32[] select(%gt, %li, %ri)
  ROOT %vi = (f32[], s32[]) tuple(%v, %i)
}

ENTRY %main {
  %vals = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %idx = s32[8,16] iota(), iota_dimension=1
  %init.v = f32[] constant(0)
  %init.i = s32[] constant(0)
  %red = (f32[8], s32[8]) reduce(%vals, %idx, %init.v, %init.i), dimensions={1}, to_apply=%argmax
  %g0 = f32[8] get-tuple-element(%red), index=0
  %g1 = s32[8] get-tuple-element(%red), index=1
  %c0 = f32[8] copy(%g0)
  %c1 = s32[8] copy(%g1)
  ROOT %res = (f32[8], s32[8]) tuple(%c0, %c1)
}
)"));
  ExpectSharding(module(), "red",
                 "{{devices=[2,2]0,1,2,3 last_tile_dim_replicate}, "
                 "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}}");
  ExpectSharding(module(), "g0", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "g1", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "idx", "{devices=[2,2]0,1,2,3}");
  ExpectNoSharding(module(), "init.v");
  ExpectNoSharding(module(), "init.i");
}

// --- Reduce-window. ---

TEST_F(DotReducePropagationTest, ReduceWindowForwardKeepsOperandSharding) {
  ASSERT_TRUE(Run(R"(
HloModule rw_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

ENTRY %main {
  %p0 = f32[16,16] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %init = f32[] constant(0)
  %rw = f32[8,16] reduce-window(%p0, %init), window={size=2x1 stride=2x1}, to_apply=%max
  ROOT %out = f32[8,16] copy(%rw)
}
)"));
  ExpectSharding(module(), "rw", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,2,1,3}");
  ExpectNoSharding(module(), "init");
}

TEST_F(DotReducePropagationTest, ReduceWindowBackwardGivesUserSharding) {
  ASSERT_TRUE(Run(R"(
HloModule rw_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %m = f32[] maximum(%x, %y)
}

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %c = f32[16,16] copy(%p0)
  %init = f32[] constant(0)
  %rw = f32[8,16] reduce-window(%c, %init), window={size=2x1 stride=2x1}, to_apply=%max
  %hint = f32[8,16] copy(%rw), sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "rw", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "c", "{devices=[4,1]0,1,2,3}");
  ExpectNoSharding(module(), "init");
}

// --- Dot forward. ---

// Batch dim 2-way, contracting dim 2-way: the contracting tiling becomes
// replication, the other operand's free dim gets 1.
TEST_F(DotReducePropagationTest, DotForwardFromLhsBatchAndContracting) {
  ASSERT_TRUE(Run(R"(
HloModule dot_lhs, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[4,8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3}
  %rhs = f32[4,16,32] parameter(1)
  %dot = f32[4,8,32] dot(%lhs, %rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT %out = f32[4,8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,1,1,2]0,1,2,3 last_tile_dim_replicate}");
}

// rhs [k,n] tiled [2,2]: n keeps its tiling, k's tiling (device pairs along
// the rows of the tile array) becomes the replication group.
TEST_F(DotReducePropagationTest, DotForwardFromRhsOnly) {
  ASSERT_TRUE(Run(R"(
HloModule dot_rhs, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0)
  %rhs = f32[16,32] parameter(1), sharding={devices=[2,2]0,1,2,3}
  %dot = f32[8,32] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = f32[8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}");
}

TEST_F(DotReducePropagationTest, DotMergesPartialShardingsOf2DMesh) {
  ASSERT_TRUE(Run(R"(
HloModule dot_merge, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %rhs = f32[16,32] parameter(1), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}
  %dot = f32[8,32] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = f32[8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
}

TEST_F(DotReducePropagationTest, DotMergesBatchAndFreeShardings8Devices) {
  ASSERT_TRUE(Run(R"(
HloModule dot_merge8, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %lhs = f32[4,8,16] parameter(0), sharding={devices=[2,2,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}
  %rhs = f32[4,16,32] parameter(1), sharding={devices=[2,1,2,2]0,2,1,3,4,6,5,7 last_tile_dim_replicate}
  %dot = f32[4,8,32] dot(%lhs, %rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT %out = f32[4,8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[2,2,2]0,1,2,3,4,5,6,7}");
}

// Equally specific full tilings from both sides: the larger operand (rhs)
// wins, the smaller one's candidate does not replace it.
TEST_F(DotReducePropagationTest, DotTieLargerRhsWins) {
  ASSERT_TRUE(Run(R"(
HloModule dot_tie_rhs, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %rhs = f32[16,64] parameter(1), sharding={devices=[1,4]0,1,2,3}
  %dot = f32[8,64] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = f32[8,64] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[1,4]0,1,2,3}");
}

TEST_F(DotReducePropagationTest, DotTieLargerLhsWins) {
  ASSERT_TRUE(Run(R"(
HloModule dot_tie_lhs, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[64,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %rhs = f32[16,8] parameter(1), sharding={devices=[1,4]0,1,2,3}
  %dot = f32[64,8] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = f32[64,8] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[4,1]0,1,2,3}");
}

// A sharded user reaches the dot at level 0 (elementwise users propagate
// backward at any level), before the dot's own operands are considered.
TEST_F(DotReducePropagationTest, DotFollowsShardedUserOverLargerOperand) {
  ASSERT_TRUE(Run(R"(
HloModule dot_user, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %rhs = f32[16,64] parameter(1), sharding={devices=[1,4]0,1,2,3}
  %dot = f32[8,64] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %neg = f32[8,64] negate(%dot)
  %hint = f32[8,64] copy(%neg), sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[8,64] copy(%hint)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "neg", "{devices=[4,1]0,1,2,3}");
}

TEST_F(DotReducePropagationTest, DotWithOnlyContractingShardedIsReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule dot_contracting, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %rhs = f32[16,32] parameter(1), sharding={devices=[4,1]0,1,2,3}
  %dot = f32[8,32] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT %out = f32[8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{replicated}");
  ExpectSharding(module(), "out", "{replicated}");
}

// --- Dot backward. ---

TEST_F(DotReducePropagationTest, DotBackwardToBothOperands) {
  ASSERT_TRUE(Run(R"(
HloModule dot_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[16,32] parameter(1)
  %lhs = f32[8,16] copy(%p0)
  %rhs = f32[16,32] copy(%p1)
  %dot = f32[8,32] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "lhs", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "rhs", "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
}

// The rhs gets n from the output (groups {0,2},{1,3}) and k from the lhs
// (groups {0,1},{2,3}); the two partial shardings merge into a full tiling.
TEST_F(DotReducePropagationTest, DotBackwardMergesOutputAndOtherOperand) {
  ASSERT_TRUE(Run(R"(
HloModule dot_bwd_merge, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[8,16] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %p1 = f32[16,32] parameter(1)
  %rhs = f32[16,32] copy(%p1)
  %dot = f32[8,32] dot(%lhs, %rhs), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "rhs", "{devices=[2,2]0,1,2,3}");
}

TEST_F(DotReducePropagationTest, DotBatchShardingReachesOtherOperand) {
  ASSERT_TRUE(Run(R"(
HloModule dot_batch_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %lhs = f32[4,8,16] parameter(0), sharding={devices=[4,1,1]0,1,2,3}
  %p1 = f32[4,16,32] parameter(1)
  %rhs = f32[4,16,32] copy(%p1)
  %dot = f32[4,8,32] dot(%lhs, %rhs), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT %out = f32[4,8,32] copy(%dot)
}
)"));
  ExpectSharding(module(), "dot", "{devices=[4,1,1]0,1,2,3}");
  ExpectSharding(module(), "rhs", "{devices=[4,1,1]0,1,2,3}");
}

// --- Grouped convolutions and random states (XLA's rules). ---

// A depthwise convolution whose kernel is large (a weight-gradient shape):
// XLA keeps only the batch split of the input (ConvolutionDataParallelism);
// the partitioner can split groups, but propagation does not carry them.
TEST_F(DotReducePropagationTest, GroupedConvolutionKeepsOnlyTheBatchSplit) {
  ASSERT_TRUE(Run(R"(
HloModule grouped, allow_spmd_sharding_propagation_to_output={false}, num_partitions=16

ENTRY %entry {
  %p0 = f32[256,512,16,32] parameter(0), sharding={devices=[2,2,2,2]<=[16]}
  %p1 = f32[512,1,12,28] parameter(1), sharding={replicated}
  %conv = f32[256,512,5,5] convolution(%p0, %p1), window={size=12x28}, dim_labels=bf01_oi01->bf01, feature_group_count=512
  ROOT %copy = f32[256,512,5,5] copy(%conv)
}
)"));
  ExpectSharding(module(), "conv", "{devices=[2,1,1,1,8]<=[16] last_tile_dim_replicate}");
}

// What an rng-bit-generator reads is replicated, whatever its operands are
// split by (XLA's InferShardingFromUsers, ReplicateRngBitGeneratorSeed).
TEST_F(DotReducePropagationTest, RngBitGeneratorStateIsReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule rbg, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%or (x: u64[], y: u64[]) -> u64[] {
  %x = u64[] parameter(0)
  %y = u64[] parameter(1)
  ROOT %r = u64[] or(%x, %y)
}

ENTRY %main {
  %p = s32[2,2] parameter(0), sharding={devices=[2,2]<=[4]}
  %up = u64[2,2] convert(%p)
  %zero = u64[] constant(0)
  %seed = u64[2] reduce(%up, %zero), dimensions={1}, to_apply=%or
  %bits = u32[64,32] rng-bit-generator(%seed), algorithm=rng_default
  ROOT %s = u32[64,32] custom-call(%bits), custom_call_target="Sharding", sharding={devices=[2,2]<=[4]}
}
)"));
  ExpectSharding(module(), "seed", "{replicated}");
}

}  // namespace
}  // namespace sharc::spmd
