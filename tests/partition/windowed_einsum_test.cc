// Windowed einsum (spmd/partition/windowed_einsum.h): a dot whose operand
// would be all-gathered along a free dim runs as one partial dot per chunk
// while the chunks rotate by collective-permutes; a dot whose partial result
// would be reduce-scattered runs as one partial dot per result block while
// a running sum rotates. With the threshold at 0 every such dot is windowed;
// each case runs against the global program, and at XLA's default threshold
// (256 MiB) these small dots gather (or reduce-scatter).
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "spmd/partition/partitioner.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

int Count(const hlo::Module& m, hlo::Opcode op) {
  int n = 0;
  for (const hlo::Computation* c : m.computations())
    for (const hlo::Instruction* i : c->instructions()) n += i->opcode() == op;
  return n;
}

struct Case {
  std::string name;
  std::string text;
  int permutes;  // collective-permutes of the windowed dot
  // The collective the dot uses unwindowed (none of it once windowed).
  hlo::Opcode unwindowed = hlo::Opcode::kAllGather;
};

class WindowedEinsumTest : public ::testing::TestWithParam<Case> {};

TEST_P(WindowedEinsumTest, MatchesGlobalWithoutAllGather) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(GetParam().text));
  PartitionOptions windowed;
  windowed.windowed_einsum_threshold_mib = 0;
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global, windowed));
  EXPECT_EQ(Count(*local, hlo::Opcode::kAllGather), 0) << hlo::PrintModule(*local);
  EXPECT_EQ(Count(*local, GetParam().unwindowed), 0) << hlo::PrintModule(*local);
  EXPECT_EQ(Count(*local, hlo::Opcode::kCollectivePermute), GetParam().permutes)
      << hlo::PrintModule(*local);
  for (uint32_t seed : {1u, 2u})
    EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, seed));
  // The default threshold keeps these small dots on an all-gather.
  ASSERT_OK_AND_ASSIGN(auto gathered, PartitionModule(*global));
  EXPECT_GT(Count(*gathered, GetParam().unwindowed), 0) << hlo::PrintModule(*gathered);
  EXPECT_EQ(Count(*gathered, hlo::Opcode::kCollectivePermute), 0);
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *gathered, 1));
}

std::string Dot(const std::string& lhs, const std::string& lhs_sharding, const std::string& rhs,
                const std::string& rhs_sharding, const std::string& out,
                const std::string& out_sharding, const std::string& dims) {
  return absl::StrCat("HloModule windowed, num_partitions=4\n\nENTRY main {\n  lhs = ", lhs,
                      " parameter(0), sharding=", lhs_sharding, "\n  rhs = ", rhs,
                      " parameter(1), sharding=", rhs_sharding, "\n  ROOT dot = ", out,
                      " dot(lhs, rhs), ", dims, ", sharding=", out_sharding, "\n}\n");
}

std::vector<Case> Cases() {
  const std::string mk = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  return {
      // rhs gathered along its columns; the result keeps the lhs's rows.
      {"rhs_columns",
       Dot("f32[64,32]", "{devices=[4,1]0,1,2,3}", "f32[32,64]", "{devices=[1,4]0,1,2,3}",
           "f32[64,64]", "{devices=[4,1]0,1,2,3}", mk),
       3},
      // lhs gathered along its rows; the result keeps the rhs's columns.
      {"lhs_rows",
       Dot("f32[64,32]", "{devices=[4,1]0,1,2,3}", "f32[32,48]", "{devices=[1,4]0,1,2,3}",
           "f32[64,48]", "{devices=[1,4]0,1,2,3}", mk),
       3},
      // Devices in another order: chunks rotate along the tile order.
      {"permuted_devices",
       Dot("f32[32,16]", "{devices=[4,1]2,0,3,1}", "f32[16,40]", "{devices=[1,4]2,0,3,1}",
           "f32[32,40]", "{devices=[4,1]2,0,3,1}", mk),
       3},
      // A batch dim in front: the gathered free dim is result dim 2.
      {"batched",
       Dot("f32[2,16,8]", "{devices=[1,4,1]0,1,2,3}", "f32[2,8,24]", "{devices=[1,1,4]0,1,2,3}",
           "f32[2,16,24]", "{devices=[1,4,1]0,1,2,3}",
           "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
           "rhs_contracting_dims={1}"),
       3},
      // Groups of two on 4 devices: rows split 2 ways and replicated in
      // pairs; the rhs's columns split along the same device pairs, so its
      // chunks rotate within {0,2} and {1,3}.
      {"mesh_2x2",
       Dot("f32[16,8]", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", "f32[8,12]",
           "{devices=[1,2,2]0,1,2,3 last_tile_dim_replicate}", "f32[16,12]",
           "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", mk),
       1},
      // Reduce-scatter forms: the contracting dim split 4 ways, the result
      // split along the lhs's rows, then along the rhs's columns.
      {"scatter_lhs_rows",
       Dot("f32[64,32]", "{devices=[1,4]0,1,2,3}", "f32[32,48]", "{devices=[4,1]0,1,2,3}",
           "f32[64,48]", "{devices=[4,1]0,1,2,3}", mk),
       3, hlo::Opcode::kReduceScatter},
      {"scatter_rhs_columns",
       Dot("f32[16,32]", "{devices=[1,4]0,1,2,3}", "f32[32,48]", "{devices=[4,1]0,1,2,3}",
           "f32[16,48]", "{devices=[1,4]0,1,2,3}", mk),
       3, hlo::Opcode::kReduceScatter},
      // Devices in another order: the sum travels along the tile order.
      {"scatter_permuted_devices",
       Dot("f32[32,16]", "{devices=[1,4]3,1,0,2}", "f32[16,40]", "{devices=[4,1]3,1,0,2}",
           "f32[32,40]", "{devices=[4,1]3,1,0,2}", mk),
       3, hlo::Opcode::kReduceScatter},
      // A batch dim in front, and a 2x2 mesh: the contracting dim over pairs
      // {0,1} and {2,3}, the batch over the other axis.
      {"scatter_batched_mesh_2x2",
       Dot("f32[2,16,8]", "{devices=[2,1,2]0,1,2,3}", "f32[2,8,12]", "{devices=[2,2,1]0,1,2,3}",
           "f32[2,16,12]", "{devices=[2,2,1]0,1,2,3}",
           "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
           "rhs_contracting_dims={1}"),
       1, hlo::Opcode::kReduceScatter},
  };
}

INSTANTIATE_TEST_SUITE_P(Dots, WindowedEinsumTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace sharc::spmd
