// Linearize splits f into a primal computation returning f(x) and residuals,
// and a linear computation of (tangents, residuals): run one after the other
// they must agree with the JVP, and the linear part must transpose (the
// dot-product test against its own transpose).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/linearize.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using testing::Dot;
using testing::Random;

// Runs computation `c` of `module` as if it were the entry.
Literal RunComputation(const Module& module, const Computation& c,
                       const std::vector<Literal>& args) {
  std::unique_ptr<Module> copy = module.Clone();
  copy->set_entry(copy->FindComputation(c.name()));
  return testing::Run(*copy, args);
}

TEST(LinearizeTest, PrimalThenLinearMatchesJvp) {
  auto m = testing::Parse(R"(HloModule m
ENTRY %main {
  %x = f64[3] parameter(0)
  %y = f64[3] parameter(1)
  %s = f64[3] sine(%x)
  %p = f64[3] multiply(%s, %y)
  ROOT %e = f64[3] exponential(%p)
}
)");
  ASSERT_NE(m, nullptr);
  const Computation& f = *m->entry();
  ASSERT_OK_AND_ASSIGN(Linearization lin, Linearize(*m, f));
  EXPECT_EQ(lin.linear->num_parameters(), 2 + lin.num_residuals);
  std::mt19937_64 rng(11);
  std::vector<Literal> x = {Random(f.parameter(0)->shape(), rng),
                            Random(f.parameter(1)->shape(), rng)};
  std::vector<Literal> t = {Random(f.parameter(0)->shape(), rng),
                            Random(f.parameter(1)->shape(), rng)};
  Literal primal = RunComputation(*m, *lin.primal, x);
  ASSERT_EQ(primal.elements().size(), static_cast<size_t>(1 + lin.num_residuals));
  testing::ExpectNear(primal.element(0), testing::Run(*m, x), 0, "primal value");
  std::vector<Literal> linear_args = t;
  for (int64_t k = 0; k < lin.num_residuals; ++k) linear_args.push_back(primal.element(1 + k));
  Literal tangent = RunComputation(*m, *lin.linear, linear_args);
  ASSERT_OK_AND_ASSIGN(auto jvp, JvpModule(*m));
  std::vector<Literal> jvp_args = x;
  for (const Literal& l : t) jvp_args.push_back(l);
  testing::ExpectNear(tangent, testing::Run(*jvp, jvp_args).element(1), 1e-14, "tangent");

  // The linear part's transpose: <T(v), t> = <v, L(t)>.
  ASSERT_OK_AND_ASSIGN(Computation * transposed, Transpose(*m, *lin.linear, 2));
  Literal v = Random(tangent.shape(), rng, -1, 1);
  std::vector<Literal> t_args;
  for (int64_t k = 0; k < lin.num_residuals; ++k) t_args.push_back(primal.element(1 + k));
  t_args.push_back(v);
  Literal tv = RunComputation(*m, *transposed, t_args);
  const double lhs = Dot(tv.element(0), t[0]) + Dot(tv.element(1), t[1]);
  EXPECT_NEAR(lhs, Dot(v, tangent), 1e-12 * (1 + std::abs(lhs)));
}

}  // namespace
}  // namespace sharc::autodiff
