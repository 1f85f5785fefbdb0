#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/text/parser.h"
#include "spmd/cost_model.h"
#include "spmd/cost_report.h"
#include "spmd/partition/partitioner.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;

TEST(CostModelTest, EveryOpcodeHasACostFunction) {
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    hlo::Opcode op = static_cast<hlo::Opcode>(i);
    EXPECT_TRUE(HasCostFunction(op)) << "op '" << hlo::OpcodeName(op) << "' has no cost function";
  }
}

constexpr char kMatmul[] = R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[64,32] parameter(0), sharding={devices=[1,4]0,1,2,3}
  w = f32[32,16] parameter(1), sharding={devices=[4,1]0,1,2,3}
  ROOT d = f32[64,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
})";

TEST(CostReportTest, CountsDotFlopsAndTheAllReducePerDevice) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kMatmul));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  ASSERT_OK_AND_ASSIGN(CostReport r, AnalyzeCost(*local, global.get()));
  EXPECT_EQ(r.num_devices, 4);
  // Each device: [64,8] x [8,16] -> 2*64*16*8 flops.
  EXPECT_EQ(r.flops, 2.0 * 64 * 16 * 8 + /*all-reduce adds*/ 64 * 16);
  ASSERT_EQ(r.collectives.count("all-reduce"), 1u);
  EXPECT_EQ(r.collectives.at("all-reduce").count, 1);
  // Ring all-reduce of 4 KiB over 4 devices sends 2*3/4 of it.
  EXPECT_EQ(r.collectives.at("all-reduce").bytes_sent, 2 * 3 * 64 * 16 * 4 / 4);
  EXPECT_GT(r.peak_memory_in_bytes, 64 * 16 * 4);
  EXPECT_THAT(r.ToJson(), HasSubstr("\"schema_version\": 1"));
  EXPECT_THAT(r.ToJson(), HasSubstr("\"peak_memory_in_bytes\""));
}

TEST(CostReportTest, MeasuresPaddingOfUnevenShards) {
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[10,16] parameter(0), sharding={devices=[4,1]0,1,2,3}
  ROOT n = f32[10,16] negate(x), sharding={devices=[4,1]0,1,2,3}
})"));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  ASSERT_OK_AND_ASSIGN(CostReport r, AnalyzeCost(*local, global.get()));
  // 4 shards of 3 rows hold 12 rows for 10: 2 rows of 16 floats are padding,
  // per value (x and n), spread over 4 devices.
  EXPECT_EQ(r.padding_bytes, 2 * (2 * 16 * 4) / 4);
}

TEST(CostReportTest, PeakMemoryCountsTheTemporariesOfACallee) {
  // The callee's 4 KiB broadcast lives only while the call runs; the entry
  // alone never holds more than its 16-byte values.
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
body {
  p = f32[4] parameter(0)
  big = f32[4,256] broadcast(p), dimensions={0}
  zero = f32[] constant(0)
  s = f32[] reduce(big, zero), dimensions={0,1}, to_apply=add
  ROOT r = f32[4] broadcast(s), dimensions={}
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] call(x), to_apply=body
})"));
  ASSERT_OK_AND_ASSIGN(CostReport r, AnalyzeCost(*module, nullptr));
  EXPECT_GE(r.peak_memory_in_bytes, 1024 * 4 + 16);
  EXPECT_LT(r.peak_memory_in_bytes, 1024 * 4 + 64);
}

TEST(CostReportTest, DrawsWhichDeviceHoldsWhichTile) {
  ASSERT_OK_AND_ASSIGN(hlo::Sharding s, hlo::ParseSharding("{devices=[2,2]0,2,1,3}"));
  std::string grid = DrawShardingGrid(hlo::Shape(hlo::PrimitiveType::kF32, {8, 8}), s);
  EXPECT_THAT(grid, HasSubstr("| device 0 | device 2 |"));
  EXPECT_THAT(grid, HasSubstr("| device 1 | device 3 |"));
  ASSERT_OK_AND_ASSIGN(hlo::Sharding p, hlo::ParseSharding("{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"));
  EXPECT_THAT(DrawShardingGrid(hlo::Shape(hlo::PrimitiveType::kF32, {8, 8}), p),
              HasSubstr("devices 0,1"));
}

}  // namespace
}  // namespace sharc::spmd
