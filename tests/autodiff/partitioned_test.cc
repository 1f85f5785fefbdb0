// Derivatives of MapReduce programs run partitioned: the FedSGD step (a
// gradient and a server update), the parallel MAML gradient (second order)
// and the gradient of a map-heavy program, lowered and partitioned over the
// clients (tools' pipeline, reference-interpreter kernels), must match the
// unpartitioned interpreter.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "autodiff/grad.h"
#include "tests/autodiff/autodiff_test_util.h"
#include "tests/testlib/status_matchers.h"
#include "driver/compile_stages.h"
#include "driver/spmd_runner.h"

namespace sharc::autodiff {
namespace {

constexpr char kLoss[] = R"(HloModule fedsgd, mesh={clients=%d}
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
  %data = f64[6,2] parameter(1)
  %b = f64[6,2] mapreduce.broadcast(%w), placement=clients
  %l = f64[6] mapreduce.map(%b, %data), placement=clients, to_apply=%loss
  ROOT %m = f64[] mapreduce.mean(%l), placement=clients
}
)";

// Runs `module` partitioned over `devices` and unpartitioned; they must agree.
void ExpectPartitionedMatches(const Module& module, const std::vector<Literal>& args,
                              int64_t devices, const std::string& what) {
  Literal expected = testing::Run(module, args);
  std::unique_ptr<Module> prepared = module.Clone();
  driver::CompileOptions options;
  options.devices = devices;
  ASSERT_OK(driver::PrepareModule(*prepared, options));
  auto partitioned = driver::RunPartitioned(*prepared, args, devices);
  ASSERT_TRUE(partitioned.ok()) << what << ": " << partitioned.status();
  testing::ExpectNear(*partitioned, expected, 1e-12, what);
}

std::unique_ptr<Module> LossModule(int64_t mesh_size) {
  std::string text = kLoss;
  text.replace(text.find("%d"), 2, std::to_string(mesh_size));
  return testing::Parse(text);
}

std::vector<Literal> Inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  return {testing::Random(Shape(PrimitiveType::kF64, {2}), rng, -1, 1),
          testing::Random(Shape(PrimitiveType::kF64, {6, 2}), rng, -2, 2)};
}

TEST(PartitionedTest, FedSgdStep) {
  for (int64_t devices : {2, 3, 6}) {
    auto m = LossModule(devices);
    ASSERT_NE(m, nullptr);
    ASSERT_OK_AND_ASSIGN(Computation * grad, Grad(*m, *m->entry(), {0}));
    // step(w, data) = w - 0.1 * grad(w, data).
    Computation* step = NewComputation(*m, "fedsgd_step");
    Emitter e(step);
    Instruction* w = e.Add(Instruction::CreateParameter(0, "w", grad->parameter(0)->shape()), true);
    Instruction* data =
        e.Add(Instruction::CreateParameter(1, "data", grad->parameter(1)->shape()), true);
    Instruction* g = Gte(e, CallOf(e, grad, {w, data}), 0);
    step->set_root(Sub(e, w, Scale(e, g, 0.1)));
    // The loss itself is no longer needed (the gradient copies it).
    Computation* loss = m->entry();
    m->set_entry(step);
    m->RemoveComputation(loss);
    m->SortCalleesFirst();
    auto reparsed = testing::Reparse(*m);
    ASSERT_NE(reparsed, nullptr);
    ExpectPartitionedMatches(*reparsed, Inputs(devices), devices,
                             absl::StrCat("fedsgd on ", devices, " devices"));
  }
}

TEST(PartitionedTest, ParallelMamlGradient) {
  auto m = LossModule(3);
  ASSERT_NE(m, nullptr);
  Computation* loss = m->FindComputation("loss");
  ASSERT_OK_AND_ASSIGN(Computation * inner_grad, Grad(*m, *loss, {0}));
  // adapted(w, y) = loss(w - 0.1 * grad loss(w, y), y); meta = mean of it.
  Computation* adapted = NewComputation(*m, "adapted_loss");
  {
    Emitter e(adapted);
    Instruction* w = e.Add(Instruction::CreateParameter(0, "w", loss->parameter(0)->shape()), true);
    Instruction* y = e.Add(Instruction::CreateParameter(1, "y", loss->parameter(1)->shape()), true);
    Instruction* g = Gte(e, CallOf(e, inner_grad, {w, y}), 0);
    adapted->set_root(CallOf(e, loss, {Sub(e, w, Scale(e, g, 0.1)), y}));
  }
  Computation* old_entry = m->entry();
  const Shape placed(PrimitiveType::kF64, {6, 2});
  Computation* meta = NewComputation(*m, "meta_loss");
  {
    Emitter e(meta);
    Instruction* w = e.Add(Instruction::CreateParameter(0, "w", Shape(PrimitiveType::kF64, {2})), true);
    Instruction* data = e.Add(Instruction::CreateParameter(1, "data", placed), true);
    Instruction* b = e.Add(Opcode::kMapReduceBroadcast, placed, {w},
                           {{"placement", std::string("clients")}});
    Instruction* l = e.Add(Opcode::kMapReduceMap, Shape(PrimitiveType::kF64, {6}), {b, data},
                           {{"placement", std::string("clients")}, {"to_apply", adapted}});
    meta->set_root(e.Add(Opcode::kMapReduceMean, Shape::Scalar(PrimitiveType::kF64), {l},
                         {{"placement", std::string("clients")}}));
  }
  m->set_entry(meta);
  m->RemoveComputation(old_entry);
  m->SortCalleesFirst();
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*testing::Reparse(*m), {0}));
  auto reparsed = testing::Reparse(*grad);
  ASSERT_NE(reparsed, nullptr);
  ExpectPartitionedMatches(*reparsed, Inputs(7), 3, "parallel MAML gradient");
}

TEST(PartitionedTest, GradientOfMapProgram) {
  auto m = testing::Parse(R"(HloModule m, mesh={clients=4}
%f {
  %x = f64[2] parameter(0)
  %w = f64[2] parameter(1)
  %s = f64[2] sine(%x)
  %p = f64[2] multiply(%s, %w)
  %t = f64[2] tanh(%p)
  ROOT %d = f64[] dot(%t, %x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}
ENTRY %main {
  %a = f64[8,2] parameter(0)
  %w = f64[2] parameter(1)
  %b = f64[8,2] mapreduce.broadcast(%w), placement=clients
  %r = f64[8] mapreduce.map(%a, %b), placement=clients, to_apply=%f
  %s = f64[] mapreduce.sum(%r), placement=clients
  %q = f64[] multiply(%s, %s)
  ROOT %m = f64[] add(%q, %s)
}
)");
  ASSERT_NE(m, nullptr);
  ASSERT_OK_AND_ASSIGN(auto grad, GradModule(*m));
  for (uint64_t seed : {1, 2, 3}) {
    std::mt19937_64 rng(seed);
    std::vector<Literal> args = {testing::Random(Shape(PrimitiveType::kF64, {8, 2}), rng, -1, 1),
                                 testing::Random(Shape(PrimitiveType::kF64, {2}), rng, -1, 1)};
    ExpectPartitionedMatches(*grad, args, 4, absl::StrCat("gradient, seed ", seed));
  }
}

}  // namespace
}  // namespace sharc::autodiff
