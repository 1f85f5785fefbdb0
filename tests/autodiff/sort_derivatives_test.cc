// sort's and topk's derivatives: the tangent moves with the sorted (or
// selected) elements (a gather by the permutation or the indices), checked
// against finite differences at random points (no ties, where both are
// differentiable), and reverse mode transposes that gather.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/passes/lower_for_compute.h"
#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

constexpr char kSortRows[] = R"(HloModule m
%lt (a: f64[], b: f64[]) -> pred[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=LT
}
ENTRY %e {
  %x = f64[3,5] parameter(0)
  ROOT %s = f64[3,5] sort(%x), dimensions={1}, to_apply=%lt
})";

// Sort values by keys descending; both get tangents.
constexpr char kSortByKey[] = R"(HloModule m
%gt (a: f64[], b: f64[], i: f64[], j: f64[]) -> pred[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  %i = f64[] parameter(2)
  %j = f64[] parameter(3)
  ROOT %c = pred[] compare(%a, %b), direction=GT
}
ENTRY %e {
  %k = f64[4,3] parameter(0)
  %v = f64[4,3] parameter(1)
  %s = (f64[4,3], f64[4,3]) sort(%k, %v), dimensions={0}, is_stable=true, to_apply=%gt
  %sk = f64[4,3] get-tuple-element(%s), index=0
  %sv = f64[4,3] get-tuple-element(%s), index=1
  ROOT %m = f64[4,3] multiply(%sk, %sv)
})";

// The 2 largest of each row, weighted by their positions' indices.
constexpr char kTopK[] = R"(HloModule m
ENTRY %e {
  %x = f64[3,5] parameter(0)
  %t = (f64[3,2], s32[3,2]) topk(%x), k=2, largest=true
  %v = f64[3,2] get-tuple-element(%t), index=0
  %i = s32[3,2] get-tuple-element(%t), index=1
  %w = f64[3,2] convert(%i)
  ROOT %m = f64[3,2] multiply(%v, %w)
})";

TEST(SortDerivativesTest, TopKMatchesFiniteDifferencesBothWays) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kTopK);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 13, "topk");
}

// A map of an elementwise function: inlined into array ops before
// autodiff (hlo/passes/inline_map.h), so both modes differentiate it.
constexpr char kElementwiseMap[] = R"(HloModule m
%f (p0: f64[], p1: f64[]) -> f64[] {
  %p0 = f64[] parameter(0)
  %p1 = f64[] parameter(1)
  %c = f64[] constant(3)
  %m = f64[] multiply(%p0, %p1)
  %s = f64[] sine(%m)
  ROOT %r = f64[] add(%s, %c)
}
ENTRY %e {
  %x = f64[3,4] parameter(0)
  %y = f64[3,4] parameter(1)
  ROOT %m = f64[3,4] map(%x, %y), dimensions={0,1}, to_apply=%f
})";

TEST(SortDerivativesTest, ElementwiseMapMatchesFiniteDifferencesBothWays) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kElementwiseMap);
  ASSERT_NE(module, nullptr);
  // What every command that loads a module does first.
  ASSERT_TRUE(hlo::LowerForCompute(*module).ok());
  EXPECT_EQ(module->entry()->root()->opcode(), hlo::Opcode::kAdd);
  testing::CheckDerivatives(*module, 14, "map");
}

TEST(SortDerivativesTest, RowsMatchFiniteDifferencesBothWays) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kSortRows);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 11, "sort rows");
}

TEST(SortDerivativesTest, KeyValueSortMatchesFiniteDifferencesBothWays) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kSortByKey);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 12, "sort by key");
}

}  // namespace
}  // namespace sharc::autodiff
