// Tracing errors come back from jit as absl::Status starting with the file
// and line of the user's call that failed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Ramp;
using ::sharc::frontend::testing::S32;
using ::sharc::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The message must start with "<this file>:<line>: ".
::testing::Matcher<std::string> AtLine(int line) {
  return StartsWith(absl::StrCat(__FILE__, ":", line, ": "));
}

TEST(FrontendErrorsTest, MatmulOfMismatchedShapesNamesTheCallersLine) {
  int line = 0;
  Jitted f = jit([&](Tensor a, Tensor b) {
    line = __LINE__ + 1;
    return matmul(a, b);
  });
  absl::StatusOr<HostTree> out = f(Ramp({2, 3}), Ramp({4, 5}));
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(AtLine(line), HasSubstr("frontend_errors_test.cc:"),
                                  HasSubstr("not aligned: 3"))));
}

TEST(FrontendErrorsTest, OperatorsNameTheExpressionsLine) {
  int line = 0;
  Jitted f = jit([&](Tensor a, Tensor b) {
    line = __LINE__ + 1;
    return a + b;
  });
  absl::StatusOr<HostTree> f_out = f(Ramp({2, 3}), Ramp({4}));
  EXPECT_THAT(f_out,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(AtLine(line), HasSubstr("do not broadcast"))));
}

TEST(FrontendErrorsTest, OpTableRejectionsNameTheLine) {
  // Float-only math on integers is rejected by the op table's shape
  // inference; the message still starts at the user's call.
  int line = 0;
  Jitted f = jit([&](Tensor a) {
    line = __LINE__ + 1;
    return exp(a);
  });
  absl::StatusOr<HostTree> f_out = f(S32({2}, {1, 2}));
  EXPECT_THAT(f_out,
              StatusIs(absl::StatusCode::kInvalidArgument, AllOf(AtLine(line), HasSubstr("exp"))));
}

TEST(FrontendErrorsTest, MixedDTypesAndBadAxes) {
  int line = 0;
  Jitted mixed = jit([&](Tensor a, Tensor b) {
    line = __LINE__ + 1;
    return a * b;
  });
  absl::StatusOr<HostTree> mixed_out = mixed(F32({2}, {1, 2}), S32({2}, {1, 2}));
  EXPECT_THAT(mixed_out,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(AtLine(line), HasSubstr("different element types"))));
  int axis_line = 0;
  Jitted axes = jit([&](Tensor a) {
    axis_line = __LINE__ + 1;
    return sum(a, 2);
  });
  absl::StatusOr<HostTree> axes_out = axes(Ramp({2, 2}));
  EXPECT_THAT(axes_out, StatusIs(absl::StatusCode::kInvalidArgument,
                                           AllOf(AtLine(axis_line), HasSubstr("axis 2"))));
}

TEST(FrontendErrorsTest, EinsumAndReshapeErrors) {
  int line = 0;
  Jitted f = jit([&](Tensor a, Tensor b) {
    line = __LINE__ + 1;
    return einsum("ij,jk->ik", a, b);
  });
  absl::StatusOr<HostTree> f_out = f(Ramp({2, 3}), Ramp({4, 2}));
  EXPECT_THAT(f_out,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(AtLine(line), HasSubstr("label 'j' has size 3 and 4"))));
  Jitted g = jit([&](Tensor a) {
    line = __LINE__ + 1;
    return reshape(a, {4, -1});
  });
  absl::StatusOr<HostTree> g_out = g(Ramp({6}));
  EXPECT_THAT(g_out, StatusIs(absl::StatusCode::kInvalidArgument,
                                     AllOf(AtLine(line), HasSubstr("cannot infer"))));
}

TEST(FrontendErrorsTest, EscapedTensorIsAnError) {
  Tensor leaked;
  Jitted keep = jit([&](Tensor a) {
    leaked = a;
    return a;
  });
  ASSERT_OK(keep(F32({1}, {1})).status());
  int line = 0;
  Jitted use = jit([&](Tensor a) {
    line = __LINE__ + 1;
    return a + leaked;
  });
  absl::StatusOr<HostTree> use_out = use(F32({1}, {1}));
  EXPECT_THAT(use_out, StatusIs(absl::StatusCode::kInvalidArgument,
                                            AllOf(AtLine(line), HasSubstr("escaped"))));
}

TEST(FrontendErrorsTest, OperationsOutsideATraceThrow) {
  // Without a jit there is no Status to return: the TraceError itself says
  // where the call was.
  try {
    zeros({2});
    ADD_FAILURE() << "expected a TraceError";
  } catch (const TraceError& e) {
    EXPECT_THAT(std::string(e.status().message()), HasSubstr("outside of a traced function"));
  }
}

TEST(FrontendErrorsTest, ShardingErrorsNameTheLine) {
  const spmd::Mesh mesh = spmd::Mesh::OneDimensional("x", 2);
  int line = 0;
  Jitted f = jit([&](Tensor a) {
    line = __LINE__ + 1;
    return with_sharding_constraint(a, mesh, P("y"));
  });
  absl::StatusOr<HostTree> f_out = f(Ramp({4}));
  EXPECT_THAT(f_out, StatusIs(absl::StatusCode::kInvalidArgument,
                                     AllOf(AtLine(line), HasSubstr("\"y\""))));
  // in_shardings that do not fit the arguments name the jit call.
  JitOptions options;
  options.mesh = mesh;
  options.in_shardings = SpecTree::list({P("x")});
  const int jit_line = __LINE__ + 1;
  Jitted g = jit([](Tensor a, Tensor b) { return a + b; }, options);
  absl::StatusOr<HostTree> g_out = g(Ramp({4}), Ramp({4}));
  EXPECT_THAT(g_out, StatusIs(absl::StatusCode::kInvalidArgument,
                                                AllOf(AtLine(jit_line), HasSubstr("prefix"))));
}

TEST(FrontendErrorsTest, PytreeMisuseNamesTheJitCall) {
  const int jit_line = __LINE__ + 1;
  Jitted f = jit([](const Tree& args) -> Tree { return args["missing"]; });
  absl::StatusOr<HostTree> out = f(HostTree::dict({{"x", F32({1}, {1})}}));
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(AtLine(jit_line), HasSubstr("no key \"missing\""))));
}

TEST(FrontendErrorsTest, ErrorsInNestedFunctionsNameTheirLine) {
  int inner_line = 0, outer_line = 0;
  Jitted f = jit([&](Tensor x) {
    absl::StatusOr<TracedFunction> body = TraceComputation(
        [&](const Tree& args) -> Tree {
          inner_line = __LINE__ + 1;
          return Tree(matmul(args.leaf(), args.leaf()));
        },
        ShapeTree(hlo::Shape(f32, {2, 3})));
    outer_line = __LINE__ + 1;
    ThrowIfError(body.status());
    return Call(*body, Tree(x)).leaf();
  });
  absl::StatusOr<HostTree> out = f(Ramp({2, 3}));
  // The outer call site first, then the line inside the nested function.
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(AtLine(outer_line),
                                  HasSubstr(absl::StrCat(__FILE__, ":", inner_line, ": matmul")))));
  EXPECT_THAT(TraceComputation([](const Tree& t) { return t; }, ShapeTree(hlo::Shape(f32, {1}))),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("enclosing trace")));
}

TEST(FrontendErrorsTest, TwoMeshesInOneTrace) {
  const spmd::Mesh a = spmd::Mesh::OneDimensional("x", 2);
  const spmd::Mesh b = spmd::Mesh::OneDimensional("y", 2);
  int line = 0;
  Jitted f = jit([&](Tensor t) {
    Tensor u = with_sharding_constraint(t, a, P("x"));
    line = __LINE__ + 1;
    return with_sharding_constraint(u, b, P("y"));
  });
  absl::StatusOr<HostTree> out = f(Ramp({4}));
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(AtLine(line), HasSubstr("differs from the mesh"))));
}

}  // namespace
}  // namespace sharc::frontend
