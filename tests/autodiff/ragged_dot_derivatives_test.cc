// ragged-dot's derivatives (jax.lax.ragged_dot's form, a mixture of experts'
// layer: rows in groups, each group times its own weight matrix): bilinear
// forward mode, and reverse mode giving the rows ct times their group's
// weights transposed and each group's weights its rows' x^T ct. Checked
// against finite differences, with group sizes that leave rows in no group
// and a group with no rows.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/autodiff/autodiff_test_util.h"

namespace sharc::autodiff {
namespace {

constexpr char kExperts[] = R"(HloModule m
ENTRY %e {
  %x = f64[7,3] parameter(0)
  %w = f64[3,3,2] parameter(1)
  %sizes = s32[3] constant({2, 0, 4})
  %y = f64[7,2] ragged-dot(%x, %w, %sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT %t = f64[7,2] tanh(%y)
})";

TEST(RaggedDotDerivativesTest, MatchesFiniteDifferencesBothWays) {
  std::unique_ptr<hlo::Module> module = testing::Parse(kExperts);
  ASSERT_NE(module, nullptr);
  testing::CheckDerivatives(*module, 21, "ragged-dot");
}

}  // namespace
}  // namespace sharc::autodiff
