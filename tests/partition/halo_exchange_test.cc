// Halo exchanges (spmd/partition/halo.h): slice, pad, reverse and
// reduce-window along a split dim fetch only the window each device needs,
// with collective-permutes, instead of gathering the dim. Every case runs
// the per-device program on simulated devices against the global program,
// over even and uneven splits, offsets, strides, negative padding, windows
// wider than a tile and permuted devices; and the same module with halo
// exchanges off must gather instead.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "spmd/partition/partitioner.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

struct Case {
  std::string name;
  int64_t size;           // operand rows, split 4 ways
  std::string devices;    // tile assignment of the 4-way split
  std::string op;         // the op's text after "= f32[M,3] "
  int64_t result_rows;
};

std::string Module(const Case& c) {
  const std::string s = absl::StrCat("{devices=[4,1]", c.devices, "}");
  return absl::StrCat(R"(HloModule halo, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[)", c.size, R"(,3] parameter(0), sharding=)", s, R"(
  zero = f32[] constant(-7)
  ROOT out = f32[)", c.result_rows, ",3] ", c.op, ", sharding=", s, "\n}\n");
}

int Count(const hlo::Module& m, hlo::Opcode op) {
  int n = 0;
  for (const hlo::Computation* c : m.computations())
    for (const hlo::Instruction* i : c->instructions()) n += i->opcode() == op;
  return n;
}

class HaloTest : public ::testing::TestWithParam<Case> {};

TEST_P(HaloTest, MatchesGlobalWithoutGathering) {
  const Case& c = GetParam();
  const std::string text = Module(c);
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(text));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(Count(*local, hlo::Opcode::kAllGather), 0) << hlo::PrintModule(*local);
  EXPECT_EQ(Count(*local, hlo::Opcode::kAllToAll), 0);
  for (uint32_t seed : {1u, 2u}) {
    EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, seed))
        << text << hlo::PrintModule(*local);
  }
  // With halo exchanges off the dim is gathered (so this test sees the
  // feature), and the answer is the same.
  PartitionOptions off;
  off.halo_exchange = false;
  ASSERT_OK_AND_ASSIGN(auto gathered, PartitionModule(*global, off));
  EXPECT_GT(Count(*gathered, hlo::Opcode::kAllGather), 0);
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *gathered, 1));
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  const std::vector<std::pair<std::string, std::string>> orders = {{"", "0,1,2,3"},
                                                                   {"perm", "2,0,3,1"}};
  for (const auto& [tag, devices] : orders) {
    for (int64_t n : {16, 13, 10}) {
      // slices: [begin:limit:stride]
      for (auto [b, l, st] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
               {1, n, 1}, {0, n - 1, 1}, {2, n - 2, 1}, {3, n, 1}, {1, n - 3, 2}, {0, n, 3},
               {5, n, 1}}) {
        const int64_t m = (l - b + st - 1) / st;
        out.push_back({absl::StrCat("slice_", n, "_", b, "_", l, "_", st, tag), n, devices,
                       absl::StrCat("slice(x), slice={[", b, ":", l, ":", st, "], [0:3]}"), m});
      }
      // pads: low_high (negative crops)
      for (auto [lo, hi] : std::vector<std::pair<int64_t, int64_t>>{
               {1, 0}, {0, 2}, {2, 1}, {-1, 1}, {1, -2}, {-2, -1}, {3, 3}}) {
        out.push_back({absl::StrCat("pad_", n, "_", lo < 0 ? "m" : "", std::abs(lo), "_",
                                    hi < 0 ? "m" : "", std::abs(hi), tag),
                       n, devices,
                       absl::StrCat("pad(x, zero), padding=", lo, "_", hi, "x0_0"), n + lo + hi});
      }
      out.push_back({absl::StrCat("reverse_", n, tag), n, devices,
                     "reverse(x), dimensions={0,1}", n});
      // reduce-windows: size, stride, padding; the init value (-7) is not
      // the reducer's identity, so it must enter each window exactly once.
      for (auto [k, st, lo, hi] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
               {3, 1, 1, 1}, {2, 2, 0, 0}, {3, 2, 1, 0}, {5, 1, 0, 0}, {4, 3, 2, 2}, {1, 2, 0, 1}}) {
        const int64_t m = (n + lo + hi - k) / st + 1;
        for (const char* reducer : {"add", "max"}) {
          out.push_back({absl::StrCat("reduce_window_", reducer, "_", n, "_", k, "_", st, "_", lo,
                                      "_", hi, tag),
                         n, devices,
                         absl::StrCat("reduce-window(x, zero), window={size=", k, "x2 stride=", st,
                                      "x1 pad=", lo, "_", hi, "x0_1}, to_apply=", reducer),
                         m});
        }
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, HaloTest, ::testing::ValuesIn(Cases()),
                         [](const auto& info) { return info.param.name; });

// Both dims split (a 2x2 mesh) and both changed: one halo per dim.
TEST(Halo, TwoSplitDims) {
  constexpr char kText[] = R"(HloModule halo2, num_partitions=4

ENTRY main {
  x = f32[10,12] parameter(0), sharding={devices=[2,2]0,1,2,3}
  zero = f32[] constant(0)
  p = f32[11,13] pad(x, zero), padding=2_-1x0_1, sharding={devices=[2,2]0,1,2,3}
  ROOT s = f32[9,6] slice(p), slice={[1:10], [1:13:2]}, sharding={devices=[2,2]0,1,2,3}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(Count(*local, hlo::Opcode::kAllGather), 0) << hlo::PrintModule(*local);
  EXPECT_GT(Count(*local, hlo::Opcode::kCollectivePermute), 0);
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 5));
}

// An operand that is replicated is sliced locally: a halo would send bytes
// where the plan keeping the dim whole sends none.
TEST(Halo, ReplicatedOperandSlicesLocally) {
  constexpr char kText[] = R"(HloModule halo3, num_partitions=4

ENTRY main {
  x = f32[16,3] parameter(0), sharding={replicated}
  ROOT s = f32[12,3] slice(x), slice={[1:13], [0:3]}, sharding={devices=[4,1]0,1,2,3}
}
)";
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  EXPECT_EQ(testing_util::CollectiveCounts(*local),
            "all-reduce=0 all-gather=0 reduce-scatter=0 all-to-all=0 collective-permute=0");
  EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, 6));
}

// Concatenate along the split dim: each device's block takes its rows from
// the operands that hold them, fetched by halo exchange. Operands of even
// and uneven splits, of fewer rows than devices, three operands, permuted
// devices, and a second split dim the concatenate leaves alone.
TEST(Halo, ConcatenateAlongTheSplitDim) {
  struct ConcatCase {
    std::vector<int64_t> rows;
    std::string devices;
    bool split_columns;
  };
  for (const ConcatCase& c : std::vector<ConcatCase>{{{8, 8}, "<=[4]", false},
                                                     {{6, 7}, "<=[4]", false},
                                                     {{3, 10, 2}, "2,0,3,1", false},
                                                     {{5, 1, 9}, "<=[4]", false},
                                                     {{6, 5}, "<=[4]", true}}) {
    const std::string s = c.split_columns ? absl::StrCat("{devices=[2,2]", c.devices, "}")
                                          : absl::StrCat("{devices=[4,1]", c.devices, "}");
    std::string text = "HloModule concat, num_partitions=4\n\nENTRY main {\n";
    std::vector<std::string> names;
    int64_t total = 0;
    for (size_t k = 0; k < c.rows.size(); ++k) {
      names.push_back(absl::StrCat("x", k));
      absl::StrAppend(&text, "  x", k, " = f32[", c.rows[k], ",4] parameter(", k, "), sharding=", s,
                      "\n");
      total += c.rows[k];
    }
    absl::StrAppend(&text, "  ROOT c = f32[", total, ",4] concatenate(", absl::StrJoin(names, ", "),
                    "), dimensions={0}, sharding=", s, "\n}\n");
    ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(text));
    ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
    EXPECT_EQ(Count(*local, hlo::Opcode::kAllGather), 0) << text << hlo::PrintModule(*local);
    EXPECT_GT(Count(*local, hlo::Opcode::kCollectivePermute), 0) << text;
    for (uint32_t seed : {1u, 2u}) {
      EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, seed))
          << text << hlo::PrintModule(*local);
    }
    PartitionOptions off;
    off.halo_exchange = false;
    ASSERT_OK_AND_ASSIGN(auto gathered, PartitionModule(*global, off));
    EXPECT_GT(Count(*gathered, hlo::Opcode::kAllGather), 0) << text;
    EXPECT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *gathered, 1)) << text;
  }
}

}  // namespace
}  // namespace sharc::spmd
