// Golden tests for sharding propagation through gather and scatter (the
// basic passthrough cases: operand passthrough dims, index passthrough dims,
// update window dims). Expected values are what XLA's GSPMD
// (ShardingPropagation, is_spmd=true) produces; see
// ../shared/reference/xla_gspmd.md Part B.
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

class GatherScatterPropagationTest : public testing_util::PropagationTest {};

// Row gather: operand f32[32,16], indices s32[8,1] -> f32[8,16]. Output dim 0
// is the index batch dim, output dim 1 the operand's (whole) dim 1.

TEST_F(GatherScatterPropagationTest, GatherForwardOperandPassthroughDim) {
  ASSERT_TRUE(Run(R"(
HloModule gather_operand, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %op = f32[32,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %idx = s32[8,1] parameter(1)
  %g = f32[8,16] gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  ROOT %out = f32[8,16] copy(%g)
}
)"));
  ExpectSharding(module(), "g", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[1,4]0,1,2,3}");
}

TEST_F(GatherScatterPropagationTest, GatherForwardIndexPassthroughDim) {
  ASSERT_TRUE(Run(R"(
HloModule gather_index, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %op = f32[32,16] parameter(0)
  %idx = s32[8,1] parameter(1), sharding={devices=[4,1]3,2,1,0}
  %g = f32[8,16] gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  ROOT %out = f32[8,16] copy(%g)
}
)"));
  ExpectSharding(module(), "g", "{devices=[4,1]3,2,1,0}");
}

// Index passthrough (rows {0,1},{2,3}) and operand passthrough (columns
// {0,2},{1,3}) partial shardings merge into one full tiling.
TEST_F(GatherScatterPropagationTest, GatherMergesIndexAndOperandShardings) {
  ASSERT_TRUE(Run(R"(
HloModule gather_merge, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %op = f32[32,16] parameter(0), sharding={devices=[1,2,2]0,2,1,3 last_tile_dim_replicate}
  %idx = s32[8,1] parameter(1), sharding={devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}
  %g = f32[8,16] gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  ROOT %out = f32[8,16] copy(%g)
}
)"));
  ExpectSharding(module(), "g", "{devices=[2,2]0,1,2,3}");
}

TEST_F(GatherScatterPropagationTest, GatherBackwardToIndices) {
  ASSERT_TRUE(Run(R"(
HloModule gather_bwd_index, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %op = f32[32,16] parameter(0)
  %p1 = s32[8,1] parameter(1)
  %idx = s32[8,1] copy(%p1)
  %g = f32[8,16] gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  %hint = f32[8,16] copy(%g), sharding={devices=[4,1]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "g", "{devices=[4,1]0,1,2,3}");
  ExpectSharding(module(), "idx", "{devices=[4,1]0,1,2,3}");
}

TEST_F(GatherScatterPropagationTest, GatherBackwardToOperandPassthroughDim) {
  ASSERT_TRUE(Run(R"(
HloModule gather_bwd_operand, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

ENTRY %main {
  %p0 = f32[32,16] parameter(0)
  %op = f32[32,16] copy(%p0)
  %idx = s32[8,1] parameter(1)
  %g = f32[8,16] gather(%op, %idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  %hint = f32[8,16] copy(%g), sharding={devices=[1,4]0,1,2,3}
  ROOT %out = f32[8,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "op", "{devices=[1,4]0,1,2,3}");
}

// Scatter of rows: operand f32[32,16], indices s32[8,1], updates f32[8,16].

TEST_F(GatherScatterPropagationTest, ScatterForwardFromOperand) {
  ASSERT_TRUE(Run(R"(
HloModule scatter_operand, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %op = f32[32,16] parameter(0), sharding={devices=[1,4]0,1,2,3}
  %idx = s32[8,1] parameter(1)
  %upd = f32[8,16] parameter(2)
  %sc = f32[32,16] scatter(%op, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%sum
  ROOT %out = f32[32,16] copy(%sc)
}
)"));
  ExpectSharding(module(), "sc", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "out", "{devices=[1,4]0,1,2,3}");
}

TEST_F(GatherScatterPropagationTest, ScatterForwardFromUpdateWindowDim) {
  ASSERT_TRUE(Run(R"(
HloModule scatter_update, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %op = f32[32,16] parameter(0)
  %idx = s32[8,1] parameter(1)
  %upd = f32[8,16] parameter(2), sharding={devices=[1,4]2,3,0,1}
  %sc = f32[32,16] scatter(%op, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%sum
  ROOT %out = f32[32,16] copy(%sc)
}
)"));
  ExpectSharding(module(), "sc", "{devices=[1,4]2,3,0,1}");
}

TEST_F(GatherScatterPropagationTest, ScatterBackwardToOperandAndUpdates) {
  ASSERT_TRUE(Run(R"(
HloModule scatter_bwd, allow_spmd_sharding_propagation_to_output={true}, num_partitions=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main {
  %p0 = f32[32,16] parameter(0)
  %p2 = f32[8,16] parameter(2)
  %op = f32[32,16] copy(%p0)
  %idx = s32[8,1] parameter(1)
  %upd = f32[8,16] copy(%p2)
  %sc = f32[32,16] scatter(%op, %idx, %upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%sum
  %hint = f32[32,16] copy(%sc), sharding={devices=[1,4]0,1,2,3}
  ROOT %out = f32[32,16] copy(%hint)
}
)"));
  ExpectSharding(module(), "sc", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "op", "{devices=[1,4]0,1,2,3}");
  ExpectSharding(module(), "upd", "{devices=[1,4]0,1,2,3}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

// --- Indices built from iotas: batch dims in all but name. ---

TEST_F(GatherScatterPropagationTest, IotaIndicesMakeAGatherParallelOverTheOperandsRows) {
  // Component 0 counts up along indices dim 1, which is as long as operand
  // dim 0: row k of the indices reads row k of the operand.
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %table = f32[8,6,3] parameter(0), sharding={devices=[4,1,1]0,1,2,3}
  %rows = s32[1,8,6] iota(), iota_dimension=1
  %cols = s32[1,8,6] iota(), iota_dimension=2
  %idx = s32[2,8,6] concatenate(%rows, %cols), dimensions={0}
  %g = f32[8,6,3] gather(%table, %idx), offset_dims={2}, collapsed_slice_dims={0,1},
       start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1,3}
  ROOT %r = f32[8,6,3] copy(%g)
})"));
  ExpectSharding(module(), "g", "{devices=[4,1,1]0,1,2,3}");
  // And back: the indices' rows follow.
  ExpectSharding(module(), "idx", "{devices=[1,4,1]0,1,2,3}");
}

TEST_F(GatherScatterPropagationTest, IotaIndicesMakeAScatterParallelToo) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}
ENTRY %e {
  %acc = f32[6,5] parameter(0)
  %idx = s32[6,1] iota(), iota_dimension=0
  %upd = f32[6,5] parameter(1), sharding={devices=[2,1]0,1}
  %s = f32[6,5] scatter(%acc, %idx, %upd), update_window_dims={1}, inserted_window_dims={0},
       scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
  ROOT %r = f32[6,5] copy(%s)
})"));
  ExpectSharding(module(), "s", "{devices=[2,1]0,1}");
  // The iota's rows follow the updates' (an entry parameter keeps none).
  ExpectSharding(module(), "idx", "{devices=[2,1]0,1}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST_F(GatherScatterPropagationTest, AVariadicScattersOperandsTakeTheirOwnResultsLayout) {
  // Operand i gets result i's sharding, not the whole tuple sharding (which
  // an array cannot hold: the partitioner refused the module).
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=2
%add2 (a: f32[], b: s32[], c: f32[], d: s32[]) -> (f32[], s32[]) {
  %a = f32[] parameter(0)
  %b = s32[] parameter(1)
  %c = f32[] parameter(2)
  %d = s32[] parameter(3)
  %x = f32[] add(%a, %c)
  %y = s32[] add(%b, %d)
  ROOT %t = (f32[], s32[]) tuple(%x, %y)
}
ENTRY %e {
  %p0 = f32[4,3] parameter(0)
  %p1 = s32[4,3] parameter(1)
  %v0 = f32[4,3] copy(%p0)
  %v1 = s32[4,3] copy(%p1)
  %idx = s32[2,1] parameter(2)
  %u0 = f32[2,3] parameter(3)
  %u1 = s32[2,3] parameter(4)
  %s = (f32[4,3], s32[4,3]) scatter(%v0, %v1, %idx, %u0, %u1), update_window_dims={1},
       inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add2,
       sharding={{devices=[1,2]0,1}, {replicated}}
  ROOT %r = (f32[4,3], s32[4,3]) copy(%s)
})"));
  ExpectSharding(module(), "v0", "{devices=[1,2]0,1}");
  ExpectSharding(module(), "v1", "{replicated}");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST_F(GatherScatterPropagationTest, AScattersResultFollowsItsIndicesAlongTheirBatchDims) {
  ASSERT_TRUE(Run(R"(
HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}
ENTRY %e {
  %acc = f32[6,5] parameter(0)
  %base = s32[6,1] iota(), iota_dimension=0
  %idx = s32[6,1] copy(%base), sharding={devices=[2,1]0,1}
  %upd = f32[6,5] parameter(1)
  %s = f32[6,5] scatter(%acc, %idx, %upd), update_window_dims={1}, inserted_window_dims={0},
       scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add
  ROOT %r = f32[6,5] copy(%s)
})"));
  ExpectSharding(module(), "s", "{devices=[2,1]0,1}");
}

}  // namespace
}  // namespace sharc::spmd
