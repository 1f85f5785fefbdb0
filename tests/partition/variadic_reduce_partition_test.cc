// A variadic reduce (argmax: values and their indices) along a split dim:
// each device reduces its shard, the partial results are all-gathered along
// a new trailing dim and reduced again, as XLA does; the operands are never
// gathered whole. The harness's small integer inputs make many ties, which
// argmax's comparator breaks by the lower index, so the gathered partials
// must combine exactly as the global reduce does; uneven splits check that
// padding never wins.
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

std::string Argmax(int devices, const std::string& dims, const std::string& x_sharding,
                   const std::string& result_sharding) {
  return PartitionAndCheck(absl::StrCat("HloModule m, num_partitions=", devices, R"(
%argmax {
  %av = f32[] parameter(0)
  %ai = s32[] parameter(1)
  %bv = f32[] parameter(2)
  %bi = s32[] parameter(3)
  %gt = pred[] compare(%av, %bv), direction=GT
  %eq = pred[] compare(%av, %bv), direction=EQ
  %lt = pred[] compare(%ai, %bi), direction=LT
  %tie = pred[] and(%eq, %lt)
  %pick = pred[] or(%gt, %tie)
  %v = f32[] select(%pick, %av, %bv)
  %i = s32[] select(%pick, %ai, %bi)
  ROOT %t = (f32[], s32[]) tuple(%v, %i)
}
ENTRY %e {
  %x = f32[)", dims, "] parameter(0), sharding=", x_sharding, R"(
  %iota = s32[)", dims, "] iota(), iota_dimension=1, sharding=", x_sharding, R"(
  %ninf = f32[] constant(-inf)
  %zero = s32[] constant(0)
  ROOT %r = (f32[6], s32[6]) reduce(%x, %iota, %ninf, %zero), dimensions={1}, to_apply=%argmax,
    sharding={)", result_sharding, ", ", result_sharding, R"(}
}
)"),
                           Propagation::kAsWritten);
}

TEST(VariadicReducePartitionTest, PartialArgmaxesAreGatheredAndReducedAgain) {
  std::string text = Argmax(4, "6,12", "{devices=[1,4]<=[4]}", "{replicated}");
  EXPECT_EQ(CountOpcode(text, "all-gather"), 2) << text;
  EXPECT_NE(text.find("f32[6,4] all-gather"), std::string::npos) << text;
  EXPECT_EQ(CountOpcode(text, "reduce"), 2) << text;
}

TEST(VariadicReducePartitionTest, PaddingOfAnUnevenSplitNeverWins) {
  std::string text = Argmax(4, "6,10", "{devices=[1,4]<=[4]}", "{replicated}");
  EXPECT_NE(text.find("f32[6,4] all-gather"), std::string::npos) << text;
}

TEST(VariadicReducePartitionTest, OnlyTheReducedDimsDevicesCombine) {
  std::string text = Argmax(8, "6,12", "{devices=[2,4]<=[8]}",
                            "{devices=[2,4]<=[8] last_tile_dim_replicate}");
  EXPECT_NE(text.find("f32[3,4] all-gather"), std::string::npos) << text;
  EXPECT_NE(text.find("replica_groups={{0,1,2,3},{4,5,6,7}}"), std::string::npos) << text;
}

}  // namespace
}  // namespace sharc::spmd
