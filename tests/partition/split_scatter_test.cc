// A scatter whose updates are split along their scatter dims (XLA's index
// passthrough): each device scatters its own updates and the results are
// all-reduced with the combiner, instead of gathering indices and updates.
// Under add the operand must count once (the other devices start from -0:
// a -0 the scatter leaves alone stays -0), under max and min it may count on
// every device; padding rows of an uneven split must change nothing
// wherever their indices point. Each case is checked against the global
// program on small integer inputs.
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using testing_util::CountOpcode;
using testing_util::PartitionAndCheck;
using testing_util::Propagation;

// Rows of a [8,4] operand updated by `rows` updates of [rows,4], split over
// `devices` along the update rows; the combiner is `op` on `type`.
std::string RowScatter(int devices, const std::string& type, const std::string& op, int rows,
                       const std::string& extra_root = "") {
  const std::string t = type;
  return PartitionAndCheck(
      absl::StrCat("HloModule m, num_partitions=", devices, "\n%combine {\n  %a = ", t,
                   "[] parameter(0)\n  %b = ", t, "[] parameter(1)\n  ROOT %r = ", t, "[] ", op,
                   "(%a, %b)\n}\nENTRY %e {\n  %x = ", t, "[8,4] parameter(0), sharding={replicated}\n",
                   "  %i = s32[", rows, ",1] parameter(1), sharding={devices=[", devices, ",1]<=[",
                   devices, "]}\n", "  %u = ", t, "[", rows, ",4] parameter(2), sharding={devices=[",
                   devices, ",1]<=[", devices, "]}\n", "  %s = ", t,
                   "[8,4] scatter(%x, %i, %u), update_window_dims={1}, inserted_window_dims={0}, "
                   "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%combine, "
                   "sharding={replicated}\n",
                   extra_root.empty() ? absl::StrCat("  ROOT %out = ", t, "[8,4] copy(%s)\n")
                                      : extra_root,
                   "}\n"),
      Propagation::kAsWritten);
}

TEST(SplitScatterTest, EachDeviceScattersItsUpdatesAndTheResultsAreAllReduced) {
  for (const char* op : {"add", "maximum", "minimum"}) {
    std::string text = RowScatter(4, "f32", op, 12);
    EXPECT_EQ(CountOpcode(text, "all-reduce"), 1) << op << "\n" << text;
    EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << op << "\n" << text;
    RowScatter(2, "s32", op, 6);
  }
}

TEST(SplitScatterTest, PaddingRowsOfAnUnevenSplitChangeNothing) {
  for (const char* op : {"add", "maximum", "minimum"}) {
    std::string text = RowScatter(4, "f32", op, 10);
    EXPECT_EQ(CountOpcode(text, "all-gather"), 0) << op << "\n" << text;
    RowScatter(4, "s32", op, 7);
  }
}

TEST(SplitScatterTest, AddKeepsNegativeZeroTheUpdatesMiss) {
  // x = -0 everywhere; 1 / result < 0 tells -0 (-inf) from +0 (+inf) (as a
  // pred: the float comparison's tolerance takes -inf for +inf).
  RowScatter(4, "f32", "add", 8, R"(  %one = f32[] constant(1)
  %ones = f32[8,4] broadcast(%one), dimensions={}
  %zero = f32[] constant(0)
  %zeros = f32[8,4] broadcast(%zero), dimensions={}
  %nz = f32[8,4] negate(%zeros)
  %t = f32[8,4] scatter(%nz, %i, %u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%combine, sharding={replicated}
  %inv = f32[8,4] divide(%ones, %t), sharding={replicated}
  ROOT %neg = pred[8,4] compare(%inv, %zeros), direction=LT, sharding={replicated}
)");
}

}  // namespace
}  // namespace sharc::spmd
