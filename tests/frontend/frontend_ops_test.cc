// Every Tensor operation traced with jit and run on the interpreter, against
// values computed by hand or with loops.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/frontend/frontend_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::frontend {
namespace {

using ::sharc::frontend::testing::F32;
using ::sharc::frontend::testing::Ramp;
using ::sharc::frontend::testing::RunOnce;
using ::sharc::frontend::testing::S32;
using ::sharc::frontend::testing::Values;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Pointwise;

std::vector<double> Map(const std::vector<double>& xs, double (*f)(double)) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

TEST(FrontendOpsTest, Arithmetic) {
  hlo::Literal a = F32({4}, {1, 2, 3, 4}), b = F32({4}, {10, 20, 30, 40});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x, Tensor y) {
                         return concatenate({x + y, x - y, x * y, y / x, -x}, 0);
                       }, a, b));
  EXPECT_THAT(Values(out), ElementsAre(11, 22, 33, 44, -9, -18, -27, -36, 10, 40, 90, 160, 10, 10,
                                       10, 10, -1, -2, -3, -4));
}

TEST(FrontendOpsTest, ScalarOperandsTakeTheTensorsType) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) {
                         return concatenate({x * 2.0f, 1.0 + x, x - 1, 12 / x}, 0);
                       }, F32({2}, {3, 4})));
  EXPECT_THAT(Values(out), ElementsAre(6, 8, 4, 5, 2, 3, 4, 3));
  ASSERT_OK_AND_ASSIGN(hlo::Literal ints, RunOnce([](Tensor x) { return x * 2.5; },
                                                  S32({2}, {3, 4})));
  // The constant becomes s32 2, as JAX's weakly typed scalars become int32.
  EXPECT_EQ(ints.shape().type(), hlo::PrimitiveType::kS32);
  EXPECT_THAT(Values(ints), ElementsAre(6, 8));
}

TEST(FrontendOpsTest, MaximumMinimumPow) {
  hlo::Literal a = F32({3}, {1, 2, 5}), b = F32({3}, {0, 3, 4});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x, Tensor y) {
                         return concatenate({maximum(x, y), minimum(x, y), maximum(x, 0.0),
                                             minimum(x, 1.0), pow(y, 2.0), pow(y, x)},
                                            0);
                       }, a, b));
  EXPECT_THAT(Values(out), Pointwise(DoubleNear(1e-5), std::vector<double>{
                                                           1, 3, 5, 0, 2, 4, 1, 2, 5, 1, 1, 1,
                                                           0, 9, 16, 0, 9, 1024}));
}

TEST(FrontendOpsTest, UnaryMath) {
  const std::vector<double> xs = {0.25, 0.5, 1.5, 2.0};
  hlo::Literal x = F32({4}, {0.25f, 0.5f, 1.5f, 2.0f});
  struct Case {
    Tensor (*op)(const Tensor&, std::source_location);
    double (*expected)(double);
  };
  const Case cases[] = {
      {exp, [](double v) { return std::exp(v); }},
      {log, [](double v) { return std::log(v); }},
      {tanh, [](double v) { return std::tanh(v); }},
      {logistic, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {sqrt, [](double v) { return std::sqrt(v); }},
      {rsqrt, [](double v) { return 1 / std::sqrt(v); }},
      {sin, [](double v) { return std::sin(v); }},
      {cos, [](double v) { return std::cos(v); }},
      {floor, [](double v) { return std::floor(v); }},
      {ceil, [](double v) { return std::ceil(v); }},
  };
  for (const Case& c : cases) {
    auto op = c.op;
    ASSERT_OK_AND_ASSIGN(hlo::Literal out,
                         RunOnce([op](Tensor t) { return op(t, std::source_location::current()); }, x));
    EXPECT_THAT(Values(out), Pointwise(DoubleNear(1e-5), Map(xs, c.expected)));
  }
}

TEST(FrontendOpsTest, SignAbsNeg) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) {
                         return concatenate({sign(x), abs(x), neg(x)}, 0);
                       }, F32({3}, {-2, 0, 3})));
  EXPECT_THAT(Values(out), ElementsAre(-1, 0, 1, 2, 0, 3, 2, 0, -3));
}

TEST(FrontendOpsTest, ComparisonsGivePred) {
  hlo::Literal a = F32({3}, {1, 2, 3}), b = F32({3}, {3, 2, 1});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x, Tensor y) {
                         Tensor lt = x < y;
                         EXPECT_EQ(lt.dtype(), pred);
                         return concatenate({lt, x <= y, x > y, x >= y, x == y, x != y, x > 1.5,
                                             equal(x, y), logical_not(x == y),
                                             logical_and(x < y, x > 0.0), logical_or(x < y, x > y)},
                                            0);
                       }, a, b));
  EXPECT_THAT(Values(out), ElementsAreArray(std::vector<double>{
                               1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1,
                               0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1}));
}

TEST(FrontendOpsTest, WhereBroadcastsItsOperands) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) {
                         Tensor relu = where(x > 0.0, x, 0.0);
                         Tensor picked = select(x > 0.0, zeros_like(x), ones({1}));
                         return concatenate({relu, picked, where(x > 0.0, 7.0, x)}, 0);
                       }, F32({4}, {-1, 2, -3, 4})));
  EXPECT_THAT(Values(out), ElementsAre(0, 2, 0, 4, 1, 0, 1, 0, -1, 7, -3, 7));
}

TEST(FrontendOpsTest, Astype) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) { return astype(x, s32); },
                                                 F32({3}, {1.7f, -2.2f, 3.0f})));
  EXPECT_EQ(out.shape().type(), hlo::PrimitiveType::kS32);
  EXPECT_THAT(Values(out), ElementsAre(1, -2, 3));
}

TEST(FrontendOpsTest, NumpyBroadcasting) {
  // [2,1,3] + [4,1] -> [2,4,3]; checked against a loop.
  hlo::Literal a = Ramp({2, 1, 3}), b = Ramp({4, 1}, 10.0f);
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x, Tensor y) { return x + y; }, a, b));
  ASSERT_EQ(out.shape().dims(), (std::vector<int64_t>{2, 4, 3}));
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back((i * 3 + k) + 10.0 * j);
  EXPECT_THAT(Values(out), ElementsAreArray(expected));
  ASSERT_OK_AND_ASSIGN(hlo::Literal b2, RunOnce([](Tensor x) { return broadcast_to(x, {2, 3}); },
                                                F32({3}, {1, 2, 3})));
  EXPECT_THAT(Values(b2), ElementsAre(1, 2, 3, 1, 2, 3));
}

TEST(FrontendOpsTest, ReshapeTransposeSqueezeExpand) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) {
                         Tensor r = reshape(x, {3, -1});  // [3,2]
                         EXPECT_EQ(r.dims(), (std::vector<int64_t>{3, 2}));
                         Tensor t = transpose(r);         // [2,3]
                         Tensor e = expand_dims(t, 1);    // [2,1,3]
                         EXPECT_EQ(e.dims(), (std::vector<int64_t>{2, 1, 3}));
                         Tensor p = transpose(e, {2, 0, 1});  // [3,2,1]
                         return squeeze(p);                   // [3,2]
                       }, Ramp({6})));
  ASSERT_EQ(out.shape().dims(), (std::vector<int64_t>{3, 2}));
  // r = [[0,1],[2,3],[4,5]], t = r^T; p[k][i][0] = t[i][k] = r[k][i].
  EXPECT_THAT(Values(out), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(FrontendOpsTest, SliceIndexConcatenate) {
  hlo::Literal x = Ramp({4, 5});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor t) {
                         Tensor s = slice(t, {1, 0}, {4, 5}, {2, 2});  // rows 1,3; cols 0,2,4
                         Tensor row = index(t, -1);                     // row 3
                         return concatenate({reshape(s, {-1}), row}, 0);
                       }, x));
  EXPECT_THAT(Values(out), ElementsAre(5, 7, 9, 15, 17, 19, 15, 16, 17, 18, 19));
  ASSERT_OK_AND_ASSIGN(hlo::Literal cols, RunOnce([](Tensor a, Tensor b) {
                         return concatenate({a, b}, -1);
                       }, Ramp({2, 1}), Ramp({2, 2}, 1, 10)));
  EXPECT_THAT(Values(cols), ElementsAre(0, 10, 11, 1, 12, 13));
}

TEST(FrontendOpsTest, Reductions) {
  hlo::Literal x = F32({2, 3}, {1, 5, 3, -4, 2, 6});
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor t) {
                         Tensor keep = sum(t, 1, /*keepdims=*/true);
                         EXPECT_EQ(keep.dims(), (std::vector<int64_t>{2, 1}));
                         EXPECT_EQ(mean(t, {0, 1}, true).dims(), (std::vector<int64_t>{1, 1}));
                         return concatenate({reshape(sum(t), {1}), sum(t, 0), reshape(keep, {2}),
                                             reshape(mean(t), {1}), mean(t, -1), max(t, 1), min(t, 0),
                                             reshape(max(t), {1}), reshape(min(t), {1})},
                                            0);
                       }, x));
  EXPECT_THAT(Values(out), Pointwise(DoubleNear(1e-6), std::vector<double>{
                                                           13, -3, 7, 9, 9, 4, 13.0 / 6, 3,
                                                           4.0 / 3, 5, 6, -4, 2, 3, 6, -4}));
  ASSERT_OK_AND_ASSIGN(hlo::Literal imean, RunOnce([](Tensor t) { return mean(t); },
                                                   S32({4}, {1, 2, 3, 5})));
  EXPECT_EQ(imean.shape().type(), hlo::PrimitiveType::kF32);
  EXPECT_THAT(Values(imean), ElementsAre(2.75));
}

TEST(FrontendOpsTest, CreationOps) {
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, RunOnce([](Tensor x) {
                         return concatenate(
                             {astype(arange(3), f32), arange(1.0, 2.0, 0.25),
                              reshape(astype(iota({2, 2}, 1), f32), {-1}), zeros({2}),
                              ones({1}), full({2}, 7.5), x + ones_like(x),
                              constant(hlo::Literal::Vector<float>({9.0f, 8.0f}))},
                             0);
                       }, F32({1}, {1})));
  EXPECT_THAT(Values(out), ElementsAre(0, 1, 2, 1, 1.25, 1.5, 1.75, 0, 1, 0, 1, 0, 0, 1, 7.5, 7.5,
                                       2, 9, 8));
}

// Reference matmul over loops: [batch, m, k] x [batch, k, n].
std::vector<double> LoopMatmul(const std::vector<double>& a, const std::vector<double>& b,
                               int batch, int m, int k, int n, bool broadcast_b) {
  std::vector<double> out;
  for (int z = 0; z < batch; ++z)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int p = 0; p < k; ++p) {
          acc += a[(z * m + i) * k + p] * b[((broadcast_b ? 0 : z) * k + p) * n + j];
        }
        out.push_back(acc);
      }
  return out;
}

TEST(FrontendOpsTest, MatmulNumpySemantics) {
  hlo::Literal m23 = Ramp({2, 3}), m34 = Ramp({3, 4}, 0.5f), v3 = F32({3}, {1, -1, 2});
  auto run = [](hlo::Literal a, hlo::Literal b) {
    return RunOnce([](Tensor x, Tensor y) { return matmul(x, y); }, a, b);
  };
  ASSERT_OK_AND_ASSIGN(hlo::Literal mm, run(m23, m34));
  EXPECT_EQ(mm.shape().dims(), (std::vector<int64_t>{2, 4}));
  EXPECT_THAT(Values(mm), ElementsAreArray(LoopMatmul(Values(m23), Values(m34), 1, 2, 3, 4, false)));
  ASSERT_OK_AND_ASSIGN(hlo::Literal mv, run(m23, v3));
  EXPECT_THAT(Values(mv), ElementsAre(0 - 1 + 4, 3 - 4 + 10));
  ASSERT_OK_AND_ASSIGN(hlo::Literal vm, run(v3, m34));
  EXPECT_EQ(vm.shape().dims(), (std::vector<int64_t>{4}));
  EXPECT_THAT(Values(vm), ElementsAreArray(LoopMatmul({1, -1, 2}, Values(m34), 1, 1, 3, 4, false)));
  ASSERT_OK_AND_ASSIGN(hlo::Literal vv, run(v3, v3));
  EXPECT_TRUE(vv.shape().is_scalar());
  EXPECT_THAT(Values(vv), ElementsAre(6));
  // Batched, with the rhs broadcast over the batch.
  hlo::Literal b234 = Ramp({2, 3, 4}, 0.25f, -1.0f);
  hlo::Literal b223 = Ramp({2, 2, 3});
  ASSERT_OK_AND_ASSIGN(hlo::Literal bm, run(b223, b234));
  EXPECT_EQ(bm.shape().dims(), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_THAT(Values(bm), Pointwise(DoubleNear(1e-4), LoopMatmul(Values(b223), Values(b234), 2, 2,
                                                                 3, 4, false)));
  ASSERT_OK_AND_ASSIGN(hlo::Literal bb, run(b223, m34));
  EXPECT_THAT(Values(bb), Pointwise(DoubleNear(1e-4), LoopMatmul(Values(b223), Values(m34), 2, 2,
                                                                 3, 4, true)));
}

TEST(FrontendOpsTest, EinsumAndDotGeneral) {
  hlo::Literal a = Ramp({2, 2, 3}), b = Ramp({2, 3, 4}, 0.25f, -1.0f);
  ASSERT_OK_AND_ASSIGN(hlo::Literal bmm, RunOnce([](Tensor x, Tensor y) {
                         return einsum("bij,bjk->bik", x, y);
                       }, a, b));
  EXPECT_THAT(Values(bmm), Pointwise(DoubleNear(1e-4),
                                     LoopMatmul(Values(a), Values(b), 2, 2, 3, 4, false)));
  // Output order differs from the dot's natural order: "bij,bjk->kbi".
  ASSERT_OK_AND_ASSIGN(hlo::Literal perm, RunOnce([](Tensor x, Tensor y) {
                         return einsum("bij,bjk->kbi", x, y);
                       }, a, b));
  std::vector<double> natural = Values(bmm), expected;
  for (int k = 0; k < 4; ++k)
    for (int z = 0; z < 2; ++z)
      for (int i = 0; i < 2; ++i) expected.push_back(natural[(z * 2 + i) * 4 + k]);
  EXPECT_THAT(Values(perm), Pointwise(DoubleNear(1e-4), expected));
  ASSERT_OK_AND_ASSIGN(hlo::Literal inner, RunOnce([](Tensor x) {
                         return concatenate({reshape(einsum("i,i->", x, x), {1}),
                                             reshape(einsum("ij->ji", reshape(x, {1, 3})), {-1}),
                                             reshape(einsum("i,j", x, x), {-1})},
                                            0);
                       }, F32({3}, {1, 2, 3})));
  EXPECT_THAT(Values(inner), ElementsAre(14, 1, 2, 3, 1, 2, 3, 2, 4, 6, 3, 6, 9));
  ASSERT_OK_AND_ASSIGN(hlo::Literal general, RunOnce([](Tensor x, Tensor y) {
                         // Contract x's dim 0 with y's dim 0: x^T y.
                         return dot_general(x, y, {.lhs_contracting = {0}, .rhs_contracting = {0}});
                       }, Ramp({3, 2}), Ramp({3, 4})));
  std::vector<double> xt;
  for (int i = 0; i < 2; ++i)
    for (int p = 0; p < 3; ++p) xt.push_back(p * 2 + i);
  EXPECT_THAT(Values(general), ElementsAreArray(LoopMatmul(xt, Values(Ramp({3, 4})), 1, 2, 3, 4,
                                                           false)));
}

}  // namespace
}  // namespace sharc::frontend
