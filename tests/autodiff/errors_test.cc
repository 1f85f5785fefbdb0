// Bad input gets a clear error naming the problem: grad of a non-scalar
// result, with respect to an integer or missing parameter, and through ops
// without a derivative (named, with the instruction).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using sharc::testing::StatusIs;

TEST(AutodiffErrorsTest, GradOfNonScalarResult) {
  auto m = testing::Parse(R"(HloModule m
ENTRY %main {
  %x = f32[3] parameter(0)
  ROOT %s = f32[3] sine(%x)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(GradModule(*m), StatusIs(absl::StatusCode::kInvalidArgument,
                                       AllOf(HasSubstr("floating-point scalar result"),
                                             HasSubstr("f32[3]"), HasSubstr("%s"))));
}

TEST(AutodiffErrorsTest, GradWithRespectToIntegerOrMissingParameter) {
  auto m = testing::Parse(R"(HloModule m
ENTRY %main {
  %x = f32[] parameter(0)
  %n = s32[] parameter(1)
  %c = f32[] convert(%n)
  ROOT %p = f32[] multiply(%x, %c)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(GradModule(*m, {1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("parameter 1"), HasSubstr("s32[]"),
                             HasSubstr("not defined"))));
  EXPECT_THAT(GradModule(*m, {5}), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("parameter 5 does not exist")));
  // The default differentiates by the float parameter only.
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*m));
  Literal g = testing::Run(*grad, {Literal::Scalar(2.0f), Literal::Scalar(int32_t{3})});
  EXPECT_EQ(g.element(0).GetAsDouble(0), 3.0);
}

TEST(AutodiffErrorsTest, OpWithoutDerivativeIsNamed) {
  // A scatter that multiplies is not linear in its updates, and autodiff has
  // no rule for it.
  auto m = testing::Parse(R"(HloModule m
%mul {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] multiply(%a, %b)
}
%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[4] parameter(0)
  %u = f32[2] parameter(1)
  %i = s32[2,1] constant({{0}, {2}})
  %w = f32[4] scatter(%x, %i, %u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%mul
  %zero = f32[] constant(0)
  ROOT %s = f32[] reduce(%w, %zero), dimensions={0}, to_apply=%add
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(JvpModule(*m), StatusIs(absl::StatusCode::kInvalidArgument,
                                      AllOf(HasSubstr("scatter"), HasSubstr("%w"),
                                            HasSubstr("combiner %mul"))));
  EXPECT_THAT(GradModule(*m), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("scatter is not differentiable")));
}

// A reducer made of ops is differentiated through them; one that calls
// something opaque is refused, naming the reduce and its reducer.
TEST(AutodiffErrorsTest, ReducerWithoutDerivativeIsNamed) {
  auto m = testing::Parse(R"(HloModule m
%opaque {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %s = f32[] add(%a, %b)
  ROOT %k = f32[] custom-call(%s), custom_call_target="my_kernel"
}
ENTRY %main {
  %x = f32[4] parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%x, %zero), dimensions={0}, to_apply=%opaque
}
)");
  ASSERT_NE(m, nullptr);
  auto grad = GradModule(*m);
  ASSERT_FALSE(grad.ok());
  EXPECT_THAT(grad.status().message(), AllOf(HasSubstr("reducer %opaque"), HasSubstr("%r")));
}

TEST(AutodiffErrorsTest, CollectivesAreRefused) {
  auto m = testing::Parse(R"(HloModule m, num_partitions=2
%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main {
  %x = f32[] parameter(0)
  ROOT %r = f32[] all-reduce(%x), replica_groups={{0,1}}, to_apply=%add
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(GradModule(*m), StatusIs(absl::StatusCode::kUnimplemented,
                                       AllOf(HasSubstr("all-reduce is not differentiable"),
                                             HasSubstr("before partitioning"))));
}

TEST(AutodiffErrorsTest, OpaqueCustomCall) {
  auto m = testing::Parse(R"(HloModule m
ENTRY %main {
  %x = f32[] parameter(0)
  ROOT %r = f32[] custom-call(%x), custom_call_target="my_kernel"
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(GradModule(*m), StatusIs(absl::StatusCode::kInvalidArgument,
                                       HasSubstr("'my_kernel' is opaque to autodiff")));
}

}  // namespace
}  // namespace sharc::autodiff
