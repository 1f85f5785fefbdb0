// Gathers and scatters whose indices are built from iotas partition along
// those "implicit batch" dims with no communication: each device reads and
// writes its own rows, the index components shifted by its offset
// (spmd/rules/gather_scatter_rules.cc; XLA's Gather/ScatterParallelDim*
// tests). Each module is partitioned and checked against the global
// program on random inputs.
#include <string>

#include <gtest/gtest.h>

#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::PartitionAndCheck;

bool HasCollective(const std::string& text) {
  for (const char* op :
       {"all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter"}) {
    if (testing_util::CountOpcode(text, op) > 0) return true;
  }
  return false;
}

TEST(ParallelGatherScatterTest, AGatherOfIotaRowsStaysLocal) {
  const std::string text = PartitionAndCheck(R"(
HloModule m, num_partitions=4
ENTRY %e {
  %table = f32[8,6,3] parameter(0), sharding={devices=[4,1,1]0,1,2,3}
  %rows = s32[1,8,6] iota(), iota_dimension=1
  %cols = s32[1,8,6] iota(), iota_dimension=2
  %idx = s32[2,8,6] concatenate(%rows, %cols), dimensions={0}
  %g = f32[8,6,3] gather(%table, %idx), offset_dims={2}, collapsed_slice_dims={0,1},
       start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1,3}
  ROOT %r = f32[8,6,3] copy(%g), sharding={devices=[4,1,1]0,1,2,3}
})");
  EXPECT_FALSE(HasCollective(text)) << text;
}

TEST(ParallelGatherScatterTest, AScatterAtIotaRowsStaysLocal) {
  const std::string text = PartitionAndCheck(R"(
HloModule m, num_partitions=2
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %e {
  %acc = f32[6,5] parameter(0), sharding={devices=[2,1]0,1}
  %base = s32[6] iota(), iota_dimension=0
  %idx = s32[6,1] broadcast(%base), dimensions={0}
  %upd = f32[6,5] parameter(1), sharding={devices=[2,1]0,1}
  ROOT %s = f32[6,5] scatter(%acc, %idx, %upd), update_window_dims={1}, inserted_window_dims={0},
       scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%add,
       sharding={devices=[2,1]0,1}
})");
  EXPECT_FALSE(HasCollective(text)) << text;
}

TEST(ParallelGatherScatterTest, IndicesThatOnlyLookLikeAnIotaAreNotTakenForOne) {
  // A constant counting 0,1,2,... along dim 0 is an iota; one that does not
  // is an ordinary index, and the gather must still be right.
  PartitionAndCheck(R"(
HloModule m, num_partitions=2
ENTRY %e {
  %table = f32[4,3] parameter(0), sharding={devices=[2,1]0,1}
  %idx = s32[4,1] constant({{0},{1},{3},{2}})
  %g = f32[4,3] gather(%table, %idx), offset_dims={1}, collapsed_slice_dims={0},
       start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  ROOT %r = f32[4,3] copy(%g), sharding={devices=[2,1]0,1}
})");
}

}  // namespace
}  // namespace sharc::spmd

namespace sharc::spmd {
namespace {

TEST(ParallelGatherScatterTest, AVariadicScatterSplitsItsOperandsAlike) {
  // Two accumulators scattered at the same rows, split along them, with
  // iota rows: each device updates its own rows of both.
  const std::string text = PartitionAndCheck(R"(
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
  %acc0 = f32[6,5] parameter(0), sharding={devices=[2,1]0,1}
  %acc1 = s32[6,5] parameter(1), sharding={devices=[2,1]0,1}
  %idx = s32[6,1] iota(), iota_dimension=0
  %u0 = f32[6,5] parameter(2), sharding={devices=[2,1]0,1}
  %u1 = s32[6,5] parameter(3), sharding={devices=[2,1]0,1}
  ROOT %s = (f32[6,5], s32[6,5]) scatter(%acc0, %acc1, %idx, %u0, %u1), update_window_dims={1},
       inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
       to_apply=%add2, sharding={{devices=[2,1]0,1}, {devices=[2,1]0,1}}
})");
  EXPECT_FALSE(HasCollective(text)) << text;
}

}  // namespace
}  // namespace sharc::spmd
