// Unreduced shardings under the partitioner (spmd/unreduced.h): a value
// whose devices hold partial sums. A dot split along its contracting dim
// over exactly the result's unreduced groups keeps its partial sums; sums,
// differences and copies of partial values stay partial; any other use sums
// them first; a whole value becomes partial values on one device of each
// group. Every case runs the per-device program against the global one, with
// unreduced parameters fed as partial values and unreduced results summed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "hlo/ir/literal.h"
#include "spmd/partition/device_values.h"
#include "tests/partition/partition_and_check.h"

namespace sharc::spmd {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string PartitionAsWritten(const std::string& text) {
  return testing_util::PartitionAndCheck(text, testing_util::Propagation::kAsWritten);
}

TEST(UnreducedPartitionTest, ContractingSplitDotKeepsItsPartialSums) {
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=2
ENTRY e {
  a = f32[4,6] parameter(0), sharding={devices=[1,2]0,1}
  b = f32[6,5] parameter(1), sharding={devices=[2,1]0,1}
  d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={unreduced}
  ROOT c = f32[4,5] copy(d), sharding={unreduced}
})");
  EXPECT_THAT(local, HasSubstr("f32[4,5] dot("));
  EXPECT_THAT(local, HasSubstr("ROOT %c = f32[4,5] copy(%d)"));
  EXPECT_THAT(local, Not(HasSubstr("all-reduce")));
}

TEST(UnreducedPartitionTest, SubgroupsOfATiledResultKeepPartialSums) {
  // Rows split over {0,1} vs {2,3}; the contracting dim over each pair.
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=4
ENTRY e {
  a = f32[4,6] parameter(0), sharding={devices=[2,2]<=[4]}
  b = f32[6,5] parameter(1), sharding={devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}
})");
  EXPECT_THAT(local, HasSubstr("f32[2,5] dot("));
  EXPECT_THAT(local, Not(HasSubstr("all-reduce")));
}

TEST(UnreducedPartitionTest, PartialParametersAddWithoutCommunication) {
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=2
ENTRY e {
  a = s32[3,4] parameter(0), sharding={unreduced}
  b = s32[3,4] parameter(1), sharding={unreduced}
  s = s32[3,4] subtract(a, b), sharding={unreduced}
  n = s32[3,4] negate(s), sharding={unreduced}
  ROOT r = s32[3,4] copy(n), sharding={replicated}
})");
  // One all-reduce, for the replicated result only.
  EXPECT_THAT(local, HasSubstr("s32[3,4] subtract(%a, %b)"));
  EXPECT_THAT(local, HasSubstr("all-reduce("));
  EXPECT_THAT(local, Not(HasSubstr("all-reduce(%a")));
}

TEST(UnreducedPartitionTest, OtherOpsSumPartialValuesFirst) {
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=4
ENTRY e {
  a = f32[4,6] parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}
  ROOT t = f32[4,6] tanh(a), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
})");
  EXPECT_THAT(local, HasSubstr("all-reduce(%a)"));
  EXPECT_THAT(local, HasSubstr("replica_groups={{0,1},{2,3}}"));
}

TEST(UnreducedPartitionTest, WholeValuesBecomePartialOnOneDeviceOfEachGroup) {
  // A replicated constant plus a tiled value, asked for unreduced: device 0
  // keeps the sum, device 1 holds zeros; a later tanh sums them again.
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=2
ENTRY e {
  k = f32[2,4] constant({{1,2,3,4},{5,6,7,8}}), sharding={replicated}
  a = f32[2,4] parameter(0), sharding={devices=[1,2]0,1}
  s = f32[2,4] add(k, a), sharding={unreduced}
  ROOT t = f32[2,4] tanh(s), sharding={replicated}
})");
  EXPECT_THAT(local, HasSubstr("select("));
  EXPECT_THAT(local, HasSubstr("all-reduce("));
}

TEST(UnreducedPartitionTest, PropagationLeavesUnreducedAnnotationsInPlace) {
  std::string local = testing_util::PartitionAndCheck(R"(HloModule m, num_partitions=2
ENTRY e {
  a = f32[4,6] parameter(0), sharding={devices=[1,2]0,1}
  b = f32[6,5] parameter(1), sharding={devices=[2,1]0,1}
  d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={unreduced}
  e = f32[4,5] exponential(d)
  ROOT r = f32[4,5] add(e, e)
})");
  EXPECT_THAT(local, HasSubstr("exponential("));
}

// Found by the random partition test: a max-reduce split along its reduced
// dim leaves partial maxima, not partial sums, so an unreduced result takes
// the whole maximum and splits it; an unreduced iota is computed whole first.
TEST(UnreducedPartitionTest, OnlyPartialSumsAreKept) {
  std::string local = PartitionAsWritten(R"(HloModule m, num_partitions=2
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[6,4] parameter(0), sharding={devices=[2,1]0,1}
  init = f32[] constant(-inf)
  r = f32[4] reduce(x, init), dimensions={0}, to_apply=max, sharding={unreduced}
  ROOT s = f32[4] add(r, r), sharding={replicated}
})");
  EXPECT_THAT(local, HasSubstr("select("));
  PartitionAsWritten(R"(HloModule m, num_partitions=4
ENTRY e {
  i = f32[4,3] iota(), iota_dimension=0, sharding={devices=[2,1,2]<=[4] last_tile_dims={unreduced}}
  ROOT c = f32[4,3] copy(i), sharding={replicated}
})");
}

// Feeding and reading devices: a whole value split into partials sums back
// to itself, for {unreduced} and for a tiled sharding with an unreduced
// subgroup and a replicated one.
TEST(UnreducedDeviceValuesTest, PartialsSumToTheValue) {
  hlo::Literal value(hlo::Shape(hlo::PrimitiveType::kF32, {4, 3}));
  for (int64_t i = 0; i < 12; ++i) value.SetFromDouble(i, 1.5 * static_cast<double>(i) - 4);
  const hlo::Sharding shardings[] = {
      hlo::Sharding::Unreduced(),
      hlo::Sharding::Tiled(hlo::TileAssignment::Iota({2, 1, 2, 2}),
                           {hlo::SubgroupType::kUnreduced, hlo::SubgroupType::kReplicated})};
  for (const hlo::Sharding& sharding : shardings) {
    std::vector<hlo::Literal> parts;
    for (int64_t d = 0; d < 8; ++d) {
      absl::StatusOr<hlo::Literal> part = ShardLiteral(value, sharding, d);
      ASSERT_TRUE(part.ok()) << part.status();
      parts.push_back(*std::move(part));
    }
    absl::StatusOr<hlo::Literal> whole = AssembleLiteral(parts, sharding, value.shape());
    ASSERT_TRUE(whole.ok()) << whole.status();
    for (int64_t i = 0; i < 12; ++i) {
      EXPECT_EQ(whole->GetAsDouble(i), value.GetAsDouble(i)) << sharding.ToString() << " " << i;
    }
  }
}

}  // namespace
}  // namespace sharc::spmd
