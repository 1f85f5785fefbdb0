// Higher order: derivatives are ordinary modules, so they can be
// differentiated again. Checks d2/dx2 of x^3 (reverse over reverse), second
// derivatives through a fori loop (forward over reverse and reverse over
// reverse), and the
// gradient of a parallel MAML loss (the loss after one inner gradient step,
// over 3 clients) against finite differences of the program itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/builder.h"
#include "autodiff/grad.h"
#include "autodiff/jvp.h"
#include "hlo/text/printer.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::autodiff {
namespace {

using ::testing::HasSubstr;

// Adds `name`(x...) = get-tuple-element(call(g, x...), 0): the first gradient
// as a function with an array result, ready to be differentiated again.
Computation* FirstGradient(Module& m, Computation* g, const std::string& name) {
  Computation* c = NewComputation(m, name);
  Emitter e(c);
  std::vector<Instruction*> xs;
  for (int64_t i = 0; i < g->num_parameters(); ++i) {
    const Instruction* p = g->parameter(i);
    xs.push_back(e.Add(Instruction::CreateParameter(i, p->name(), p->shape()), true));
  }
  c->set_root(Gte(e, CallOf(e, g, xs), 0));
  return c;
}

TEST(SecondOrderTest, SecondDerivativeOfCube) {
  auto m = testing::Parse(R"(HloModule cube
ENTRY %main {
  %x = f64[] parameter(0)
  %x2 = f64[] multiply(%x, %x)
  ROOT %x3 = f64[] multiply(%x2, %x)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(Computation * g, Grad(*m, *m->entry()));
  Computation* dfdx = FirstGradient(*m, g, "dfdx");
  ASSERT_OK_AND_ASSIGN(Computation * g2, Grad(*m, *dfdx));
  m->set_entry(g2);
  auto reparsed = testing::Reparse(*m);
  ASSERT_NE(reparsed, nullptr);
  for (double x : {-1.5, 0.5, 2.0}) {
    Literal out = testing::Run(*reparsed, {Literal::Scalar(x)});
    EXPECT_NEAR(out.element(0).GetAsDouble(0), 6 * x, 1e-12);
  }
}

constexpr char kLoop[] = R"(HloModule loop
%add {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %s = f64[] add(%a, %b)
}
%body {
  %c = (s32[], f64[2], f64[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %x = f64[2] get-tuple-element(%c), index=1
  %w = f64[2] get-tuple-element(%c), index=2
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  %m = f64[2] multiply(%x, %w)
  ROOT %t = (s32[], f64[2], f64[2]) tuple(%i1, %m, %w)
}
%cond {
  %c = (s32[], f64[2], f64[2]) parameter(0)
  %i = s32[] get-tuple-element(%c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
ENTRY %main {
  %x = f64[2] parameter(0)
  %w = f64[2] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f64[2], f64[2]) tuple(%zero, %x, %w)
  %loop = (s32[], f64[2], f64[2]) while(%init), condition=%cond, body=%body
  %r = f64[2] get-tuple-element(%loop), index=1
  %z = f64[] constant(0)
  ROOT %s = f64[] reduce(%r, %z), dimensions={0}, to_apply=%add
}
)";

TEST(SecondOrderTest, ForwardOverReverseThroughLoop) {
  // x -> x * w three times in a fori loop, then summed: f = sum(x w^3).
  // The JVP of its gradient along (tx, tw) = (0, 1) is the Hessian column:
  // d(df/dx) = 3 w^2, d(df/dw) = 6 x w.
  auto m = testing::Parse(kLoop);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*m));
  ASSERT_OK_AND_ASSIGN(auto hvp, JvpModule(*testing::Reparse(*grad)));
  auto reparsed = testing::Reparse(*hvp);
  ASSERT_NE(reparsed, nullptr);
  Literal x = Literal::Vector<double>({1.5, -2.0});
  Literal w = Literal::Vector<double>({0.5, 3.0});
  Literal out = testing::Run(*reparsed, {x, w, Literal::Vector<double>({0, 0}),
                                          Literal::Vector<double>({1, 1})});
  const Literal& gradient = out.element(0);
  const Literal& column = out.element(1);
  EXPECT_NEAR(gradient.element(1).GetAsDouble(0), 3 * 1.5 * 0.25, 1e-12);
  EXPECT_NEAR(column.element(0).GetAsDouble(0), 3 * 0.25, 1e-12);
  EXPECT_NEAR(column.element(0).GetAsDouble(1), 3 * 9.0, 1e-12);
  EXPECT_NEAR(column.element(1).GetAsDouble(0), 6 * 1.5 * 0.5, 1e-12);
  EXPECT_NEAR(column.element(1).GetAsDouble(1), 6 * -2.0 * 3.0, 1e-12);
}

TEST(SecondOrderTest, ReverseOverReverseThroughLoop) {
  // h(x, w) = sum(df/dw) = sum(3 x w^2): dh/dx = 3 w^2, dh/dw = 6 x w.
  auto m = testing::Parse(kLoop);
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(Computation * g, Grad(*m, *m->entry(), {1}));
  Computation* h = NewComputation(*m, "sum_of_gradient");
  {
    Emitter e(h);
    Instruction* x = e.Add(Instruction::CreateParameter(0, "x", g->parameter(0)->shape()), true);
    Instruction* w = e.Add(Instruction::CreateParameter(1, "w", g->parameter(1)->shape()), true);
    h->set_root(ReduceSum(e, Gte(e, CallOf(e, g, {x, w}), 0), {0}));
  }
  ASSERT_OK_AND_ASSIGN(Computation * g2, Grad(*m, *h));
  m->set_entry(g2);
  auto reparsed = testing::Reparse(*m);
  ASSERT_NE(reparsed, nullptr);
  Literal out = testing::Run(*reparsed, {Literal::Vector<double>({1.5, -2.0}),
                                          Literal::Vector<double>({0.5, 3.0})});
  EXPECT_NEAR(out.element(0).GetAsDouble(0), 3 * 0.25, 1e-12);
  EXPECT_NEAR(out.element(0).GetAsDouble(1), 3 * 9.0, 1e-12);
  EXPECT_NEAR(out.element(1).GetAsDouble(0), 6 * 1.5 * 0.5, 1e-12);
  EXPECT_NEAR(out.element(1).GetAsDouble(1), 6 * -2.0 * 3.0, 1e-12);
}

// Parallel MAML: each client adapts w by one SGD step on its own loss, and
// the meta-loss is the mean of the adapted losses. Its gradient needs the
// gradient of an inner gradient.
constexpr char kMaml[] = R"(HloModule maml, mesh={clients=3}
%loss {
  %w = f64[2] parameter(0)
  %y = f64[2] parameter(1)
  %d = f64[] dot(%w, %y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  %one = f64[] constant(1)
  %e = f64[] subtract(%d, %one)
  %sq = f64[] multiply(%e, %e)
  %half = f64[] constant(0.5)
  ROOT %l = f64[] multiply(%half, %sq)
}
ENTRY %main {
  %w = f64[2] parameter(0)
  %y = f64[2] parameter(1)
  ROOT %l = f64[] call(%w, %y), to_apply=%loss
}
)";

TEST(SecondOrderTest, ParallelMamlGradient) {
  auto m = testing::Parse(kMaml);
  ASSERT_NE(m, nullptr);
  Computation* loss = m->FindComputation("loss");
  ASSERT_OK_AND_ASSIGN(Computation * inner_grad, Grad(*m, *loss, {0}));
  // adapted(w, y) = loss(w - 0.1 * grad loss(w, y), y), one client.
  Computation* adapted = NewComputation(*m, "adapted_loss");
  {
    Emitter e(adapted);
    Instruction* w = e.Add(Instruction::CreateParameter(0, "w", loss->parameter(0)->shape()), true);
    Instruction* y = e.Add(Instruction::CreateParameter(1, "y", loss->parameter(1)->shape()), true);
    Instruction* g = Gte(e, CallOf(e, inner_grad, {w, y}), 0);
    Instruction* step = Sub(e, w, Scale(e, g, 0.1));
    adapted->set_root(CallOf(e, loss, {step, y}));
  }
  // meta(w, data) = mean over clients of adapted(broadcast(w), data).
  Computation* meta = NewComputation(*m, "meta_loss");
  {
    Emitter e(meta);
    Instruction* w = e.Add(Instruction::CreateParameter(0, "w", Shape(PrimitiveType::kF64, {2})), true);
    Instruction* data =
        e.Add(Instruction::CreateParameter(1, "data", Shape(PrimitiveType::kF64, {3, 2})), true);
    Instruction* b = e.Add(Opcode::kMapReduceBroadcast, Shape(PrimitiveType::kF64, {3, 2}), {w},
                           {{"placement", std::string("clients")}});
    Instruction* l = e.Add(Opcode::kMapReduceMap, Shape(PrimitiveType::kF64, {3}), {b, data},
                           {{"placement", std::string("clients")}, {"to_apply", adapted}});
    meta->set_root(e.Add(Opcode::kMapReduceMean, Shape::Scalar(PrimitiveType::kF64), {l},
                         {{"placement", std::string("clients")}}));
  }
  m->set_entry(meta);
  m->SortCalleesFirst();
  auto meta_module = testing::Reparse(*m);
  ASSERT_NE(meta_module, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*meta_module, {0}));
  const std::string text = hlo::PrintModule(*grad);
  EXPECT_THAT(text, HasSubstr("mapreduce.map("));
  EXPECT_THAT(text, HasSubstr("mapreduce.sum("));
  auto reparsed = testing::Reparse(*grad);
  ASSERT_NE(reparsed, nullptr);
  Literal w = Literal::Vector<double>({0.3, -0.2});
  Literal data = Literal::FromValues<double>({3, 2}, std::vector<double>{1, 2, 3, -4, -7, 6});
  Literal g = testing::Run(*reparsed, {w, data});
  const double eps = 1e-6;
  for (int64_t i = 0; i < 2; ++i) {
    Literal plus = w, minus = w;
    plus.SetFromDouble(i, w.GetAsDouble(i) + eps);
    minus.SetFromDouble(i, w.GetAsDouble(i) - eps);
    const double numeric = (testing::Run(*meta_module, {plus, data}).GetAsDouble(0) -
                            testing::Run(*meta_module, {minus, data}).GetAsDouble(0)) /
                           (2 * eps);
    EXPECT_NEAR(g.element(0).GetAsDouble(i), numeric, 1e-5 * (1 + std::abs(numeric)));
  }
}

}  // namespace
}  // namespace sharc::autodiff
