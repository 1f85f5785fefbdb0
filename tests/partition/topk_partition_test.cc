// topk split along the dim it selects from: each device takes the top k of
// its shard, the candidates are gathered, sorted and sliced
// (spmd/partition/topk_combine.h). The harness's small integer inputs make
// many equal values, whose order (lower index first) the combine must keep;
// a division makes infinities and NaNs (NaN is the largest). Every case is
// checked against the global program.
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

// topk of p / q (q's zeros make inf and NaN) with `k`, laid out as written;
// with `only_nans_and_infs`, of p / (q * 0): NaN, inf and -inf only.
std::string TopK(int devices, const std::string& type, const std::string& dims, int k,
                 bool largest, const std::string& sharding, bool only_nans_and_infs = false) {
  const std::string result_dims = absl::StrCat(dims.substr(0, dims.rfind(',') + 1), k);
  const std::string array = absl::StrCat(type, "[", dims, "]");
  const std::string text = absl::StrCat(
      "HloModule m, num_partitions=", devices, "\nENTRY %e {\n",
      "  %p = ", array, " parameter(0), sharding=", sharding, "\n",
      "  %q = ", array, " parameter(1), sharding=", sharding, "\n",
      "  %zero = ", type, "[] constant(0)\n",
      "  %zeros = ", array, " broadcast(%zero), dimensions={}\n",
      "  %d = ", array, only_nans_and_infs ? " multiply(%q, %zeros)" : " add(%q, %zeros)", "\n",
      "  %x = ", array, " divide(%p, %d), sharding=", sharding, "\n",
      "  ROOT %t = (", type, "[", result_dims, "], s32[", result_dims, "]) topk(%x), k=", k,
      ", largest=", largest ? "true" : "false", "\n}\n");
  return PartitionAndCheck(text, Propagation::kAsWritten);
}

TEST(TopKPartitionTest, EachShardsCandidatesAreGatheredSortedAndSliced) {
  std::string text = TopK(4, "f32", "3,32", 5, true, "{devices=[1,4]<=[4]}");
  EXPECT_NE(text.find("f32[3,20] all-gather"), std::string::npos) << text;
  EXPECT_NE(text.find("s32[3,20] all-gather"), std::string::npos) << text;
  EXPECT_EQ(CountOpcode(text, "sort"), 1) << text;
  EXPECT_EQ(text.find("f32[3,32] all-gather"), std::string::npos) << text;
  TopK(4, "f32", "3,32", 8, false, "{devices=[1,4]<=[4]}");
  TopK(2, "s32", "4,10", 5, true, "{devices=[1,2]0,1}");
}

TEST(TopKPartitionTest, NanIsTheLargestAcrossShards) {
  TopK(4, "f32", "3,32", 6, true, "{devices=[1,4]<=[4]}", /*only_nans_and_infs=*/true);
  TopK(4, "f32", "3,32", 6, false, "{devices=[1,4]<=[4]}", /*only_nans_and_infs=*/true);
}

TEST(TopKPartitionTest, RowsSplitOnOtherDevicesStaySplit) {
  std::string text = TopK(8, "f32", "4,16", 3, true, "{devices=[2,4]<=[8]}");
  EXPECT_NE(text.find("f32[2,12] all-gather"), std::string::npos) << text;
  EXPECT_NE(text.find("replica_groups={{0,1,2,3},{4,5,6,7}}"), std::string::npos) << text;
}

TEST(TopKPartitionTest, ShardsShorterThanKOrUnevenAreGathered) {
  std::string text = TopK(4, "f32", "3,8", 3, true, "{devices=[1,4]<=[4]}");
  EXPECT_EQ(CountOpcode(text, "sort"), 0) << text;
  text = TopK(4, "f32", "3,30", 3, true, "{devices=[1,4]<=[4]}");
  EXPECT_EQ(CountOpcode(text, "sort"), 0) << text;
}

}  // namespace
}  // namespace sharc::spmd
