// Golden tests for sharding propagation through data-movement ops:
// broadcast, reshape, transpose, slice, pad, concatenate, reverse,
// dynamic-slice, dynamic-update-slice, and iota/constant sources. Expected
// values are what XLA's GSPMD (ShardingPropagation, is_spmd=true) produces;
// see ../shared/reference/xla_gspmd.md Part B. Device orders matter: every
// expectation is compared by meaning (device arrays, sorted replication
// groups), never by spelling.
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

class ShapeOpsPropagationTest : public testing_util::PropagationTest {};

// --- Broadcast: forward only at level 3, backward from level 2. ---

TEST_F(ShapeOpsPropagationTest, BroadcastForwardMapsOperandDims) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %bcast = f32[8,4,16] broadcast(%p0), dimensions={0,2}
  ROOT %out = f32[8,4,16] copy(%bcast)
}
)"));
  ExpectSharding(module(), "bcast", "{devices=[2,1,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,1,2]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, BroadcastForwardKeepsReplicationSubgroup) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_fwd_partial, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8] parameter(0), sharding={devices=[2,2]0,2,1,3 last_tile_dim_replicate}
  %bcast = f32[4,8] broadcast(%p0), dimensions={1}
  ROOT %out = f32[4,8] copy(%bcast)
}
)"));
  ExpectSharding(module(), "bcast", "{devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, BroadcastNeverForwardFromReplicatedOperand) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_repl, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8] parameter(0), sharding={replicated}
  %bcast = f32[4,8] broadcast(%p0), dimensions={1}
  ROOT %out = f32[4,8] copy(%bcast)
}
)"));
  ExpectNoSharding(module(), "bcast");
  ExpectNoSharding(module(), "out");
}

// The broadcast's user is sharded at level 0 by the other add operand; the
// broadcast takes that (level 2) before its own operand could push a
// different tiling into it (level 3), and the later forward candidate is not
// more specific.
TEST_F(ShapeOpsPropagationTest, BroadcastPrefersUserOverOperand) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_priority, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8] parameter(0), sharding={devices=[4]0,1,2,3}
  %bcast = f32[16,8] broadcast(%p0), dimensions={1}
  %q = f32[16,8] parameter(1), sharding={devices=[4,1]0,1,2,3}
  %add = f32[16,8] add(%bcast, %q)
  ROOT %out = f32[16,8] copy(%add)
}
)"));
  ExpectSharding(module(), "add", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "bcast", "{devices=[4,1]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, BroadcastBackwardReplicatesNewMajorDim) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_bwd_major, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8] parameter(0)
  %c = f32[8] copy(%p0)
  %bcast = f32[16,8] broadcast(%c), dimensions={1}
  %hint = f32[16,8] copy(%bcast), sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[16,8] copy(%hint)
}
)"));
  ExpectSharding(module(), "bcast", "{devices=[2,2]0,1,2,3}");
  // Column j of the tile array keeps its devices as a replication group.
  ExpectSharding(module(), "c", "{devices=[2,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "p0");
}

TEST_F(ShapeOpsPropagationTest, BroadcastBackwardReplicatesNewMinorDim) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_bwd_minor, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8] parameter(0)
  %c = f32[8] copy(%p0)
  %bcast = f32[8,16] broadcast(%c), dimensions={0}
  %hint = f32[8,16] copy(%bcast), sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "c", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, ScalarBroadcastOperandGetsReplicated) {
  ASSERT_TRUE(Run(R"(
HloModule bcast_scalar, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %one = f32[] constant(1)
  %bcast = f32[8,16] broadcast(%one), dimensions={}
  %hint = f32[8,16] copy(%bcast), sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "bcast", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "one", "{replicated}");
}

// --- Reshape. ---

TEST_F(ShapeOpsPropagationTest, ReshapeSplitKeepsTilingOnMajorPiece) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_split, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,8] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %r = f32[4,4,8] reshape(%p0)
  ROOT %out = f32[4,4,8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4,1,1]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[4,1,1]0,1,2,3}");
}

// 16 split 4-way into [2,8]: the major piece takes 2, the rest moves on to
// the next piece.
TEST_F(ShapeOpsPropagationTest, ReshapeSplitSpreadsTilingOverPieces) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_split2, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,8] parameter(0), sharding={devices=[4,1]3,1,2,0}
  %r = f32[2,8,8] reshape(%p0)
  ROOT %out = f32[2,8,8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2,1]3,1,2,0}");
}

TEST_F(ShapeOpsPropagationTest, ReshapeMergeWithShardedMajorDim) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_merge, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,4,16] parameter(0), sharding={devices=[4,1,1]0,1,2,3}
  %r = f32[32,16] reshape(%p0)
  ROOT %out = f32[32,16] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4,1]0,1,2,3}");
}

// Merging dims whose minor one is tiled would make non-contiguous tiles:
// nothing survives and the result is replicated.
TEST_F(ShapeOpsPropagationTest, ReshapeMergeWithShardedMinorDimReplicates) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_merge_minor, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,4] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %r = f32[32] reshape(%p0)
  ROOT %out = f32[32] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{replicated}");
}

// Both dims tiled 2-way merged into one: only the major tiling survives, the
// minor one becomes replication (devices 0,1 hold rows 0-1 = elements 0..15).
TEST_F(ShapeOpsPropagationTest, ReshapeMergeOfTwoShardedDimsKeepsMajor) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_merge_both, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[4,8] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %r = f32[32] reshape(%p0)
  ROOT %out = f32[32] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
}

// 12 split 4-way into [6,8]: 4 does not divide 6, so gcd(6,4)=2 tiles stay
// on the first piece and the remaining factor 2 becomes replication.
TEST_F(ShapeOpsPropagationTest, ReshapeGcdKeepsPartOfTiling) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_gcd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[12,4] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %r = f32[6,8] reshape(%p0)
  ROOT %out = f32[6,8] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, ReshapeInsertsSizeOneDims) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_insert1, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %r = f32[8,1,16,1] reshape(%p0)
  ROOT %out = f32[8,1,16,1] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,1,2,1]0,2,1,3}");
}

TEST_F(ShapeOpsPropagationTest, ReshapeRemovesSizeOneDims) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_remove1, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,1,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3}
  %r = f32[8,16] reshape(%p0)
  ROOT %out = f32[8,16] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,2]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, ReshapeKeepsDeviceOrderOn2DMesh) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_2d, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,6] parameter(0), sharding={devices=[2,2]0,2,1,3}
  %r = f32[2,4,6] reshape(%p0)
  ROOT %out = f32[2,4,6] copy(%r)
}
)"));
  ExpectSharding(module(), "r", "{devices=[2,1,2]0,2,1,3}");
}

TEST_F(ShapeOpsPropagationTest, ReshapeBackwardFromUser) {
  ASSERT_TRUE(Run(R"(
HloModule reshape_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[4,4,8] parameter(0)
  %c = f32[4,4,8] copy(%p0)
  %r = f32[16,8] reshape(%c)
  %hint = f32[16,8] copy(%r), sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[16,8] copy(%hint)
}
)"));
  ExpectSharding(module(), "r", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "c", "{devices=[4,1,1]0,1,2,3}");
}

// --- Transpose. ---

TEST_F(ShapeOpsPropagationTest, TransposePermutesTileAssignment) {
  ASSERT_TRUE(Run(R"(
HloModule transpose_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16,4] parameter(0), sharding={devices=[2,2,1]0,1,2,3}
  %t = f32[16,8,4] transpose(%p0), dimensions={1,0,2}
  ROOT %out = f32[16,8,4] copy(%t)
}
)"));
  ExpectSharding(module(), "t", "{devices=[2,2,1]0,2,1,3}");
  ExpectSharding(module(), "out", "{devices=[2,2,1]0,2,1,3}");
}

TEST_F(ShapeOpsPropagationTest, TransposeKeepsReplicationLast8Devices) {
  ASSERT_TRUE(Run(R"(
HloModule transpose_partial, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}
  %t = f32[16,8] transpose(%p0), dimensions={1,0}
  ROOT %out = f32[16,8] copy(%t)
}
)"));
  ExpectSharding(module(), "t", "{devices=[2,2,2]0,1,4,5,2,3,6,7 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, TransposeBackwardAppliesInversePermutation) {
  ASSERT_TRUE(Run(R"(
HloModule transpose_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,8,4] parameter(0)
  %c = f32[16,8,4] copy(%p0)
  %t = f32[4,16,8] transpose(%c), dimensions={2,0,1}
  %hint = f32[4,16,8] copy(%t), sharding={devices=[4,1,1]0,1,2,3}
  ROOT %out = f32[4,16,8] copy(%hint)
}
)"));
  ExpectSharding(module(), "t", "{devices=[4,1,1]0,1,2,3}");
  ExpectSharding(module(), "c", "{devices=[1,1,4]0,1,2,3}");
}

// --- Slice and pad (level 1). ---

TEST_F(ShapeOpsPropagationTest, SliceForwardKeepsOperandSharding) {
  ASSERT_TRUE(Run(R"(
HloModule slice_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %s = f32[8,16] slice(%p0), slice={[0:8], [0:16]}
  ROOT %out = f32[8,16] copy(%s)
}
)"));
  ExpectSharding(module(), "s", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[2,2]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, SliceBackwardGivesUserSharding) {
  ASSERT_TRUE(Run(R"(
HloModule slice_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[16,16] parameter(0)
  %c = f32[16,16] copy(%p0)
  %s = f32[8,16] slice(%c), slice={[4:12], [0:16]}
  %hint = f32[8,16] copy(%s), sharding={devices=[4,1]3,2,1,0}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "s", "{devices=[4,1]3,2,1,0}");
  ExpectSharding(module(), "c", "{devices=[4,1]3,2,1,0}");
}

TEST_F(ShapeOpsPropagationTest, PadForwardPadValueGetsNothing) {
  ASSERT_TRUE(Run(R"(
HloModule pad_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %x = f32[12,16] parameter(0), sharding={devices=[2,4]0,1,2,3,4,5,6,7}
  %zero = f32[] constant(0)
  %pad = f32[16,16] pad(%x, %zero), padding=2_2x0_0
  ROOT %out = f32[16,16] copy(%pad)
}
)"));
  ExpectSharding(module(), "pad", "{devices=[2,4]0,1,2,3,4,5,6,7}");
  ExpectSharding(module(), "out", "{devices=[2,4]0,1,2,3,4,5,6,7}");
  ExpectNoSharding(module(), "zero");
}

TEST_F(ShapeOpsPropagationTest, PadBackwardOnlyToOperandZero) {
  ASSERT_TRUE(Run(R"(
HloModule pad_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[12,14] parameter(0)
  %y = f32[12,14] copy(%p0)
  %zero = f32[] constant(0)
  %pad = f32[16,16] pad(%y, %zero), padding=2_2x1_1
  %hint = f32[16,16] copy(%pad), sharding={devices=[1,4]0,1,2,3}
  ROOT %out = f32[16,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "pad", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "y", "{devices=[1,4]0,1,2,3}");
  ExpectNoSharding(module(), "zero");
}

// --- Concatenate. ---

// The more specific operand sharding wins (level 1), and the other operand
// is refined to it because it is a sub-tiling of its partial sharding.
TEST_F(ShapeOpsPropagationTest, ConcatTakesMostSpecificOperandAndRefinesOthers) {
  ASSERT_TRUE(Run(R"(
HloModule concat_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}
  %p1 = f32[8,16] parameter(1), sharding={devices=[1,4]0,1,2,3}
  %c0 = f32[8,16] copy(%p0)
  %c1 = f32[8,16] copy(%p1)
  %cat = f32[16,16] concatenate(%c0, %c1), dimensions={0}
  ROOT %out = f32[16,16] copy(%cat)
}
)"));
  ExpectSharding(module(), "cat", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "c0", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "c1", "{devices=[1,4]0,1,2,3}");
}

// In SPMD mode every operand gets the whole concat sharding, even when the
// concat dim itself is split.
TEST_F(ShapeOpsPropagationTest, ConcatBackwardAlongShardedDim8Devices) {
  ASSERT_TRUE(Run(R"(
HloModule concat_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=8

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[8,16] parameter(1)
  %c0 = f32[8,16] copy(%p0)
  %c1 = f32[8,16] copy(%p1)
  %cat = f32[16,16] concatenate(%c0, %c1), dimensions={0}, sharding={devices=[4,2]<=[8]}
  ROOT %out = f32[16,16] copy(%cat)
}
)"));
  ExpectSharding(module(), "c0", "{devices=[4,2]0,1,2,3,4,5,6,7}");
  ExpectSharding(module(), "c1", "{devices=[4,2]0,1,2,3,4,5,6,7}");
  ExpectSharding(module(), "out", "{devices=[4,2]<=[8]}");
}

// --- Reverse: the device order flips along reversed dims. ---

TEST_F(ShapeOpsPropagationTest, ReverseFlipsDeviceOrder) {
  ASSERT_TRUE(Run(R"(
HloModule reverse_1d, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %rev = f32[8,16] reverse(%p0), dimensions={0}
  ROOT %out = f32[8,16] copy(%rev)
}
)"));
  ExpectSharding(module(), "rev", "{devices=[4,1]3,2,1,0}");
  ExpectSharding(module(), "out", "{devices=[4,1]3,2,1,0}");
}

TEST_F(ShapeOpsPropagationTest, ReverseOneDimOf2DMesh) {
  ASSERT_TRUE(Run(R"(
HloModule reverse_2d, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %rev = f32[8,16] reverse(%p0), dimensions={1}
  ROOT %out = f32[8,16] copy(%rev)
}
)"));
  ExpectSharding(module(), "rev", "{devices=[2,2]1,0,3,2}");
}

TEST_F(ShapeOpsPropagationTest, ReverseOfUnshardedDimKeepsOrder) {
  ASSERT_TRUE(Run(R"(
HloModule reverse_unsharded, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  %rev = f32[8,16] reverse(%p0), dimensions={1}
  ROOT %out = f32[8,16] copy(%rev)
}
)"));
  ExpectSharding(module(), "rev", "{devices=[4,1]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, ReverseFlipsTilesButKeepsReplicationGroups) {
  ASSERT_TRUE(Run(R"(
HloModule reverse_partial, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %rev = f32[8,16] reverse(%p0), dimensions={0,1}
  ROOT %out = f32[8,16] copy(%rev)
}
)"));
  ExpectSharding(module(), "rev", "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, ReverseBackwardFlipsUserSharding) {
  ASSERT_TRUE(Run(R"(
HloModule reverse_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0)
  %rev = f32[8,16] reverse(%c), dimensions={0}
  %hint = f32[8,16] copy(%rev), sharding={devices=[2,2]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "rev", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "c", "{devices=[2,2]2,3,0,1}");
}

// --- Dynamic-slice and dynamic-update-slice. ---

TEST_F(ShapeOpsPropagationTest, DynamicSliceForwardReplicatesSlicedDim) {
  ASSERT_TRUE(Run(R"(
HloModule ds_fwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0), sharding={devices=[2,2]0,1,2,3}
  %i = s32[] parameter(1)
  %z = s32[] constant(0)
  %ds = f32[8,4] dynamic-slice(%c, %z, %i), dynamic_slice_sizes={8,4}
  ROOT %out = f32[8,4] copy(%ds)
}
)"));
  ExpectSharding(module(), "ds", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectSharding(module(), "out", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "z");
  ExpectNoSharding(module(), "i");
}

TEST_F(ShapeOpsPropagationTest, DynamicSliceBackwardReplicatesSlicedDim) {
  ASSERT_TRUE(Run(R"(
HloModule ds_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %c = f32[8,16] copy(%p0)
  %i = s32[] parameter(1)
  %z = s32[] constant(0)
  %ds = f32[8,4] dynamic-slice(%c, %z, %i), dynamic_slice_sizes={8,4}
  %hint = f32[8,4] copy(%ds), sharding={devices=[2,2]0,2,1,3}
  ROOT %out = f32[8,4] copy(%hint)
}
)"));
  ExpectSharding(module(), "ds", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "c", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "z");
}

TEST_F(ShapeOpsPropagationTest, DynamicUpdateSliceForwardFromBase) {
  ASSERT_TRUE(Run(R"(
HloModule dus_fwd_base, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %base = f32[8,16] copy(%p0), sharding={devices=[2,2]0,1,2,3}
  %upd = f32[8,4] parameter(1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %dus = f32[8,16] dynamic-update-slice(%base, %upd, %z, %i)
  ROOT %out = f32[8,16] copy(%dus)
}
)"));
  ExpectSharding(module(), "dus", "{devices=[2,2]0,1,2,3}");
  ExpectNoSharding(module(), "z");
}

TEST_F(ShapeOpsPropagationTest, DynamicUpdateSliceForwardFromUpdate) {
  ASSERT_TRUE(Run(R"(
HloModule dus_fwd_update, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %base = f32[8,16] parameter(0)
  %p1 = f32[8,4] parameter(1)
  %upd = f32[8,4] copy(%p1), sharding={devices=[2,2]0,1,2,3}
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %dus = f32[8,16] dynamic-update-slice(%base, %upd, %z, %i)
  ROOT %out = f32[8,16] copy(%dus)
}
)"));
  ExpectSharding(module(), "dus", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
}

TEST_F(ShapeOpsPropagationTest, DynamicUpdateSliceBackward) {
  ASSERT_TRUE(Run(R"(
HloModule dus_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[8,16] parameter(0)
  %p1 = f32[8,4] parameter(1)
  %base = f32[8,16] copy(%p0)
  %upd = f32[8,4] copy(%p1)
  %i = s32[] parameter(2)
  %z = s32[] constant(0)
  %dus = f32[8,16] dynamic-update-slice(%base, %upd, %z, %i)
  %hint = f32[8,16] copy(%dus), sharding={devices=[2,2]0,2,1,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "dus", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "base", "{devices=[2,2]0,2,1,3}");
  ExpectSharding(module(), "upd", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}");
  ExpectNoSharding(module(), "z");
  ExpectNoSharding(module(), "i");
}

// --- Iota and constants only get shardings from users. ---

TEST_F(ShapeOpsPropagationTest, IotaTakesShardingFromUsers) {
  ASSERT_TRUE(Run(R"(
HloModule iota_user, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %iota = s32[8,16] iota(), iota_dimension=1
  %conv = f32[8,16] convert(%iota)
  %p0 = f32[8,16] parameter(0), sharding={devices=[2,2]0,1,2,3}
  %add = f32[8,16] add(%conv, %p0)
  ROOT %out = f32[8,16] copy(%add)
}
)"));
  ExpectSharding(module(), "add", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "conv", "{devices=[2,2]0,1,2,3}");
  ExpectSharding(module(), "iota", "{devices=[2,2]0,1,2,3}");
}

TEST_F(ShapeOpsPropagationTest, ConstantTakesShardingFromUsers) {
  ASSERT_TRUE(Run(R"(
HloModule constant_user, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %k = f32[4] constant({1, 2, 3, 4})
  %p0 = f32[4] parameter(0), sharding={devices=[4]3,2,1,0}
  %mul = f32[4] multiply(%k, %p0)
  ROOT %out = f32[4] copy(%mul)
}
)"));
  ExpectSharding(module(), "mul", "{devices=[4]3,2,1,0}");
  ExpectSharding(module(), "k", "{devices=[4]3,2,1,0}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST_F(ShapeOpsPropagationTest, AReshapeKeepsTheManualGroupsItsDataDimsCannotFollow) {
  // Dim 0 of size 1 split 2 ways cannot follow the reshape, but the value
  // is still one per manual group (it used to become {replicated}).
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %p = f32[1,3,3] parameter(0), sharding={devices=[2,1,1,2]0,1,2,3 last_tile_dims={manual}}
  %r = f32[3,1,3,1] reshape(%p)
  ROOT %c = f32[3,1,3,1] copy(%r)
})"));
  ExpectSharding(module(), "r", "{devices=[1,1,1,1,2,2]0,2,1,3 last_tile_dims={manual, replicated}}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST_F(ShapeOpsPropagationTest, ASortFollowsItsOperandEvenAlongTheSortDimWhenTheTilesCanMove) {
  // Split along the sort dim, with another dim that could take the tiles:
  // XLA's propagation carries it (the partitioner sorts whole rows).
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
%lt (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = s32[] parameter(2)
  %d = s32[] parameter(3)
  ROOT %r = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %p = f32[8,16] parameter(0)
  %x = f32[8,16] negate(%p), sharding={devices=[1,4]0,1,2,3}
  %i = s32[8,16] iota(), iota_dimension=1
  %s = (f32[8,16], s32[8,16]) sort(%x, %i), dimensions={1}, is_stable=true, to_apply=%lt
  ROOT %c = (f32[8,16], s32[8,16]) copy(%s)
})"));
  ExpectSharding(module(), "s", "{{devices=[1,4]0,1,2,3}, {devices=[1,4]0,1,2,3}}");
  ExpectSharding(module(), "i", "{devices=[1,4]0,1,2,3}");
}

}  // namespace
}  // namespace sharc::spmd
