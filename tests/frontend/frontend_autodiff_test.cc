// grad, value_and_grad, jvp and vjp of traced functions: values against hand
// derivatives, composition with jit and a second derivative, the MapReduce
// tutorial's gradient (which stays a MapReduce program), and errors.
#include "frontend/autodiff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "frontend/mapreduce.h"
#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace mr = ::sharc::frontend::mapreduce;

TEST(FrontendGradTest, GradOfADotIsTheOtherOperand) {
  Jitted g = jit(grad([](Tensor w, Tensor x) { return sum(w * x); }));
  ASSERT_OK_AND_ASSIGN(HostTree out, g(F32({3}, {1, 2, 3}), F32({3}, {4, 5, 6})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(4, 5, 6));
}

TEST(FrontendGradTest, SeveralArgnumsGiveAList) {
  Jitted g = jit(grad([](Tensor w, Tensor x) { return sum(w * x * x); }, {0, 1}));
  ASSERT_OK_AND_ASSIGN(HostTree out, g(F32({2}, {1, 2}), F32({2}, {3, 4})));
  EXPECT_THAT(Values(out[0].leaf()), ElementsAre(9, 16));   // x^2
  EXPECT_THAT(Values(out[1].leaf()), ElementsAre(6, 16));   // 2 w x
}

TEST(FrontendGradTest, ValueAndGrad) {
  Jitted g = jit(value_and_grad([](Tensor x) { return sum(x * x); }));
  ASSERT_OK_AND_ASSIGN(HostTree out, g(F32({2}, {3, -1})));
  EXPECT_THAT(Values(out[0].leaf()), ElementsAre(10));
  EXPECT_THAT(Values(out[1].leaf()), ElementsAre(6, -2));
}

TEST(FrontendGradTest, SecondDerivativeOfACube) {
  auto cube = [](Tensor x) { return sum(x * x * x); };
  // d/dx sum(3 x^2) = 6 x.
  Jitted g2 = jit(grad([cube](Tensor x) { return sum(grad(cube)(x).leaf()); }));
  ASSERT_OK_AND_ASSIGN(HostTree out, g2(F32({2}, {2, -1})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(12, -6));
}

TEST(FrontendGradTest, JvpAndVjpOfSine) {
  Jitted f = jit([](Tensor x, Tensor t) -> Tree {
    Tree forward = jvp([](Tensor v) { return sin(v); }, Tree::list({Tree(x)}), Tree::list({Tree(t)}));
    Tree backward = vjp([](Tensor v) { return sin(v); }, Tree::list({Tree(x)}), Tree(t));
    return Tree::list({forward[1], backward[1][0]});
  });
  ASSERT_OK_AND_ASSIGN(HostTree out, f(F32({2}, {0, 1}), F32({2}, {2, 3})));
  EXPECT_THAT(Values(out[0].leaf()), ElementsAre(DoubleNear(2, 1e-6), DoubleNear(3 * std::cos(1.0), 1e-6)));
  EXPECT_THAT(Values(out[1].leaf()), ElementsAre(DoubleNear(2, 1e-6), DoubleNear(3 * std::cos(1.0), 1e-6)));
}

// The DrJAX/FAX tutorial: the gradient of the mean loss over 3 clients with
// respect to the model is [57.666668, -54.666668], and it is itself a
// MapReduce program: the model's cotangent comes back through a sum.
TEST(FrontendGradTest, TutorialGradientIsAMapReduceProgram) {
  mr::Program clients("clients", 3);
  auto loss = clients.wrap([](Tensor w, Tensor data) {
    Tensor losses = mr::map_fn(
                        [](Tensor m, Tensor y) {
                          Tensor r = sum(m * y) - 1.0f;
                          return r * r * 0.5f;
                        },
                        Tree::list({mr::broadcast(w), data}))
                        .leaf();
    return mr::reduce_mean(losses);
  });
  for (const char* mesh : {"clients=1", "clients=3"}) {
    SCOPED_TRACE(mesh);
    JitOptions options;
    options.mesh = *spmd::Mesh::Parse(mesh);
    Jitted g = jit(grad(loss), options);
    ASSERT_OK_AND_ASSIGN(HostTree out, g(F32({2}, {2, -1}), F32({3, 2}, {1, 2, 3, -4, -7, 6})));
    EXPECT_THAT(Values(out.leaf()),
                ElementsAre(DoubleNear(57.666668, 1e-4), DoubleNear(-54.666668, 1e-4)));
    ASSERT_OK_AND_ASSIGN(auto module, g.Trace(ShapeTree::list({hlo::Shape(f32, {2}),
                                                               hlo::Shape(f32, {3, 2})})));
    const std::string text = module->ToString();
    EXPECT_THAT(text, HasSubstr("mapreduce.broadcast("));
    EXPECT_THAT(text, HasSubstr("mapreduce.map("));
    EXPECT_THAT(text, HasSubstr("mapreduce.sum("));
  }
}

// f(x) = [x0 * x1, x0^2]: J = [[x1, x0], [2 x0, 0]] both ways; the Hessian of
// sum(x^3) is diag(6 x).
TEST(FrontendGradTest, JacobiansAndHessian) {
  auto f = [](Tensor x) {
    Tensor x0 = slice(x, {0}, {1}), x1 = slice(x, {1}, {2});
    return concatenate({x0 * x1, x0 * x0}, 0);
  };
  Jitted forward = jit(jacfwd(f));
  Jitted reverse = jit(jacrev(f));
  for (Jitted* j : {&forward, &reverse}) {
    ASSERT_OK_AND_ASSIGN(HostTree out, (*j)(F32({2}, {3, 5})));
    EXPECT_EQ(out.leaf().shape().dims(), (std::vector<int64_t>{2, 2}));
    EXPECT_THAT(Values(out.leaf()), ElementsAre(5, 3, 6, 0));
  }
  Jitted h = jit(hessian([](Tensor x) { return sum(x * x * x); }));
  ASSERT_OK_AND_ASSIGN(HostTree out, h(F32({2}, {1, 2})));
  EXPECT_THAT(Values(out.leaf()), ElementsAre(6, 0, 0, 12));
}

TEST(FrontendGradTest, GradOfANonScalarIsAnErrorAtTheCall) {
  Jitted g = jit(grad([](Tensor x) { return x * 2.0f; }));
  const int line = __LINE__ - 1;
  absl::StatusOr<HostTree> out = g(F32({2}, {1, 2}));
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr("grad needs a function returning a floating-point scalar"));
  EXPECT_THAT(std::string(out.status().message()),
              HasSubstr(absl::StrCat("frontend_autodiff_test.cc:", line)));
}

}  // namespace
}  // namespace sharc::frontend
