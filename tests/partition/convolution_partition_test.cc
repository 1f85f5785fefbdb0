// convolution under the partitioner: batch- and output-feature-split
// convolutions run locally, an input-feature split adds an all-reduce, a
// result split along a spatial dim exchanges halos of its input with
// collective-permutes (propagation carries an input's spatial split to the
// result), and grouped convolutions split along their groups (each device
// convolves its own feature or batch groups). Every case must compute what
// the global program computes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/cost_model.h"
#include "spmd/partition/partitioner.h"
#include "spmd/propagation.h"
#include "tests/partition/partition_and_check.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

std::string PartitionAndCheck(const std::string& text) {
  return testing_util::PartitionAndCheck(text, testing_util::Propagation::kPropagate, /*seed=*/3);
}

std::string Module(const std::string& lhs_sharding, const std::string& rhs_sharding,
                   const std::string& extra = "") {
  return absl::StrCat(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6,6,4] parameter(0), sharding=)",
                      lhs_sharding, R"(
  k = f32[3,3,4,6] parameter(1), sharding=)",
                      rhs_sharding, R"(
  ROOT c = f32[4,4,4,6] convolution(x, k), window={size=3x3 stride=1x2 pad=0_0x2_1}, dim_labels=b01f_01io->b01f)",
                      extra, "\n}\n");
}

TEST(ConvolutionPartitionTest, BatchSplitIsLocal) {
  std::string local = PartitionAndCheck(Module("{devices=[2,1,1,1]0,1}", "{replicated}"));
  EXPECT_THAT(local, ::testing::HasSubstr("f32[2,4,4,6] convolution"));
  // No all-reduce: only the replicated entry result is gathered.
  EXPECT_THAT(local, ::testing::Not(::testing::HasSubstr("all-reduce")));
}

TEST(ConvolutionPartitionTest, OutputFeatureSplitIsLocal) {
  std::string local = PartitionAndCheck(Module("{replicated}", "{devices=[1,1,1,2]0,1}"));
  EXPECT_THAT(local, ::testing::HasSubstr("f32[4,4,4,3] convolution"));
  // No all-reduce: only the replicated entry result is gathered.
  EXPECT_THAT(local, ::testing::Not(::testing::HasSubstr("all-reduce")));
}

TEST(ConvolutionPartitionTest, InputFeatureSplitIsAReduction) {
  std::string local =
      PartitionAndCheck(Module("{devices=[1,1,1,2]0,1}", "{devices=[1,1,2,1]0,1}",
                               ", sharding={replicated}"));
  EXPECT_THAT(local, ::testing::HasSubstr("convolution"));
  EXPECT_THAT(local, ::testing::HasSubstr("all-reduce"));
}

// Propagation carries an input's spatial split to the result, as through
// reduce-window: the convolution then exchanges halos instead of gathering
// its input (only the replicated entry result is gathered at the end).
TEST(ConvolutionPartitionTest, SpatialSplitOfTheInputCarriesToTheResult) {
  auto module = [](const std::string& lhs_sharding, const std::string& rhs_sharding) {
    return absl::StrCat(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6,6,4] parameter(0), sharding=)",
                        lhs_sharding, R"(
  k = f32[3,3,4,6] parameter(1), sharding=)",
                        rhs_sharding, R"(
  c = f32[4,4,4,6] convolution(x, k), window={size=3x3 stride=1x2 pad=0_0x2_1}, dim_labels=b01f_01io->b01f
  ROOT t = f32[4,4,4,6] tanh(c)
})");
  };
  std::string rows = PartitionAndCheck(module("{devices=[1,2,1,1]0,1}", "{replicated}"));
  EXPECT_THAT(rows, ::testing::HasSubstr("collective-permute("));
  EXPECT_THAT(rows, ::testing::HasSubstr("f32[4,2,4,6] convolution"));
  // A kernel split along its window is gathered; the input's split stays.
  std::string cols =
      PartitionAndCheck(module("{devices=[1,1,2,1]0,1}", "{devices=[1,2,1,1]0,1}"));
  EXPECT_THAT(cols, ::testing::HasSubstr("f32[4,4,2,6] convolution"));
  // As the entry root, which propagation leaves unsplit, the convolution
  // computes whole rows from a gathered input.
  EXPECT_THAT(PartitionAndCheck(Module("{devices=[1,2,1,1]0,1}", "{replicated}")),
              ::testing::HasSubstr("f32[4,4,4,6] convolution"));
}

// A weight gradient whose one window covers the whole input (a 1x1
// result): its spatial dims are contracted like a dot's, so input and
// kernel split alike along them convolve locally and all-reduce (GSPMD's
// ConvolutionLhsTiledRhsTiled), evenly or not (the padding row, exp(0) = 1
// here, is zeroed first); a reversed kernel pairs
// block j with block n-1-j and is gathered instead.
TEST(ConvolutionPartitionTest, WholeInputWindowSplitIsAReduction) {
  auto module = [](int64_t rows, const std::string& reversal) {
    return absl::StrCat(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[3,)", rows, R"(,4,2] parameter(0), sharding={devices=[1,2,1,1]0,1}
  g = f32[3,)", rows, R"(,4,5] parameter(1), sharding={devices=[1,2,1,1]0,1}
  ex = f32[3,)", rows, R"(,4,2] exponential(x), sharding={devices=[1,2,1,1]0,1}
  eg = f32[3,)", rows, R"(,4,5] exponential(g), sharding={devices=[1,2,1,1]0,1}
  ROOT c = f32[1,1,2,5] convolution(ex, eg), window={size=)", rows, "x4", reversal,
                        R"(}, dim_labels=f01b_i01o->01bf, sharding={replicated}
})");
  };
  std::string even = PartitionAndCheck(module(6, ""));
  EXPECT_THAT(even, ::testing::HasSubstr("convolution(%ex, %eg), window={size=3x4}"));
  EXPECT_THAT(even, ::testing::HasSubstr("all-reduce("));
  EXPECT_THAT(even, ::testing::Not(::testing::HasSubstr("all-gather")));
  std::string uneven = PartitionAndCheck(module(5, ""));
  EXPECT_THAT(uneven, ::testing::HasSubstr("window={size=3x4}"));
  EXPECT_THAT(uneven, ::testing::HasSubstr("all-reduce("));
  std::string reversed = PartitionAndCheck(module(6, " rhs_reversal=1x0"));
  EXPECT_THAT(reversed, ::testing::HasSubstr("all-gather("));
}

// A weight gradient split along its window with a result wider than one
// tap (padding, dilation, an uneven split of the taps): each device
// fetches the input rows its kernel block reads (a halo, zero outside the
// input), convolves, and the partial results are all-reduced; nothing is
// gathered. The inputs go through exp first so that padding rows are not
// zero unless masked.
TEST(ConvolutionPartitionTest, WindowSplitWeightGradientExchangesHalos) {
  struct Window {
    int64_t rows, taps, out;
    std::string window;
    int devices;
    bool halo;  // false: each kernel block reads only its own input block
  };
  for (const Window& w : {Window{12, 12, 3, "size=12x4 pad=1_1x0_0", 2, true},
                          Window{12, 12, 3, "size=12x4 pad=1_1x0_0", 4, true},
                          Window{13, 13, 2, "size=13x4 pad=1_0x0_0", 2, true},
                          Window{16, 7, 5, "size=7x4 pad=1_0x0_0 rhs_dilate=2x1", 2, true},
                          Window{16, 8, 1, "size=8x4 pad=0_-1x0_0 rhs_dilate=2x1", 4, false}}) {
    SCOPED_TRACE(w.window);
    const std::string split = absl::StrCat("{devices=[1,", w.devices, ",1,1]<=[", w.devices, "]}");
    std::string local = PartitionAndCheck(absl::StrCat(
        "HloModule m, num_partitions=", w.devices, R"(
ENTRY e {
  x = f32[3,)", w.rows, R"(,4,2] parameter(0), sharding=)", split, R"(
  g = f32[3,)", w.taps, R"(,4,5] parameter(1), sharding=)", split, R"(
  ex = f32[3,)", w.rows, R"(,4,2] exponential(x), sharding=)", split, R"(
  eg = f32[3,)", w.taps, R"(,4,5] exponential(g), sharding=)", split, R"(
  ROOT c = f32[)", w.out, R"(,1,2,5] convolution(ex, eg), window={)", w.window,
        R"(}, dim_labels=f01b_i01o->01bf, sharding={replicated}
})"));
    EXPECT_EQ(local.find("collective-permute(") != std::string::npos, w.halo);
    EXPECT_THAT(local, ::testing::HasSubstr("all-reduce("));
    EXPECT_THAT(local, ::testing::Not(::testing::HasSubstr("all-gather")));
  }
}

TEST(ConvolutionPartitionTest, SpatialSplitOfTheResultExchangesHalos) {
  // Rows: a 3-row window without padding, 6 input rows in blocks of 3, 4
  // output rows in blocks of 2: block 0 reads rows 0-3 (row 3 from device
  // 1), block 1 rows 2-5 (row 2 from device 0).
  std::string rows = PartitionAndCheck(
      Module("{devices=[1,2,1,1]0,1}", "{replicated}", ", sharding={devices=[1,2,1,1]0,1}"));
  EXPECT_THAT(rows, ::testing::HasSubstr("collective-permute("));
  EXPECT_THAT(rows, ::testing::HasSubstr("f32[4,2,4,6] convolution"));
  // Columns: stride 2 with 2_1 padding, which the fetched windows replace
  // (positions outside the input are zeroed before the local convolution).
  std::string cols = PartitionAndCheck(
      Module("{devices=[1,1,2,1]0,1}", "{replicated}", ", sharding={devices=[1,1,2,1]0,1}"));
  EXPECT_THAT(cols, ::testing::HasSubstr("f32[4,4,2,6] convolution"));
  EXPECT_THAT(cols, ::testing::Not(::testing::HasSubstr("pad=")));
  for (const std::string& local : {rows, cols}) {
    EXPECT_THAT(local, ::testing::Not(::testing::HasSubstr("all-gather")));
  }
}

// A transposed convolution (base dilation 2, as the gradient of a stride-2
// one): with blocks of 8 results every block's window starts at the same
// place among the dilated input, so each device fetches input elements
// and convolves them with the same local padding; with blocks of 5 the
// starts alternate, and the input is gathered instead.
TEST(ConvolutionPartitionTest, BaseDilatedSplitExchangesHalosWhenBlocksStartAlike) {
  auto module = [](int devices) {
    return absl::StrCat("HloModule m, num_partitions=", devices, R"(
ENTRY e {
  x = f32[2,8,3] parameter(0), sharding={devices=[1,)", devices, R"(,1]<=[)", devices, R"(]}
  k = f32[3,3,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,15,4] convolution(x, k), window={size=3 pad=1_1 lhs_dilate=2}, dim_labels=b0f_0io->b0f, sharding={devices=[1,)",
                        devices, R"(,1]<=[)", devices, R"(]}
})");
  };
  std::string aligned = PartitionAndCheck(module(2));
  EXPECT_THAT(aligned, ::testing::HasSubstr("collective-permute("));
  EXPECT_THAT(aligned, ::testing::HasSubstr("lhs_dilate=2"));
  EXPECT_THAT(aligned, ::testing::Not(::testing::HasSubstr("all-gather")));
  std::string alternating = PartitionAndCheck(module(3));
  EXPECT_THAT(alternating, ::testing::HasSubstr("all-gather"));
}

TEST(ConvolutionPartitionTest, GroupedConvolutionsPartitionAlongTheBatch) {
  PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,4] parameter(0), sharding={devices=[2,1,1,1]0,1}
  k = f32[3,3,1,8] parameter(1), sharding={devices=[1,1,1,2]0,1}
  ROOT c = f32[4,3,3,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4
})");
  PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,3] parameter(0), sharding={devices=[2,1,1,1]0,1}
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
})");
}

TEST(ConvolutionPartitionTest, GroupedConvolutionsSplitAlongTheirGroups) {
  // Depthwise, features split: each device convolves its own 2 groups.
  std::string local = PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,4] parameter(0), sharding={devices=[1,1,1,2]0,1}
  k = f32[3,3,1,4] parameter(1), sharding={devices=[1,1,1,2]0,1}
  ROOT c = f32[4,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=4, sharding={devices=[1,1,1,2]0,1}
})");
  EXPECT_THAT(local, ::testing::HasSubstr("f32[4,3,3,2] convolution"));
  EXPECT_THAT(local, ::testing::HasSubstr("feature_group_count=2"));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-gather"), 0) << local;
  // Two input features per group, groups and a spatial dim split: halos of
  // the input, the kernel split along the groups.
  local = PartitionAndCheck(R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[2,8,5,8] parameter(0), sharding={devices=[1,2,1,2]<=[4]}
  k = f32[3,3,2,4] parameter(1), sharding={replicated}
  ROOT c = f32[2,8,3,4] convolution(x, k), window={size=3x3 pad=1_1x0_0}, dim_labels=b01f_01io->b01f, feature_group_count=4, sharding={devices=[1,2,1,2]<=[4]}
})");
  EXPECT_THAT(local, ::testing::HasSubstr("feature_group_count=2"));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-gather"), 0) << local;
  EXPECT_GE(testing_util::CountOpcode(local, "collective-permute"), 1) << local;
  // Batch groups (a depthwise weight gradient's form), batch split along them.
  local = PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,5,5,3] parameter(0), sharding={devices=[2,1,1,1]0,1}
  k = f32[3,3,3,4] parameter(1), sharding={devices=[1,1,1,2]0,1}
  ROOT c = f32[2,3,3,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2, sharding={devices=[1,1,1,2]0,1}
})");
  EXPECT_THAT(local, ::testing::HasSubstr("batch_group_count=1"));
  EXPECT_EQ(testing_util::CountOpcode(local, "all-gather"), 0) << local;
}

// 2 * output elements * kernel window * input features per group.
TEST(ConvolutionCostTest, CountsAMultiplyAddPerWindowTapAndGroupFeature) {
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(R"(HloModule m
ENTRY e {
  x = f32[2,5,5,4] parameter(0)
  k = f32[3,3,2,6] parameter(1)
  ROOT c = f32[2,3,3,6] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
})"));
  OpCost cost = CostOf(*module->entry()->root());
  EXPECT_EQ(cost.flops, 2.0 * (2 * 3 * 3 * 6) * (3 * 3 * 2));
}

}  // namespace
}  // namespace sharc::spmd
