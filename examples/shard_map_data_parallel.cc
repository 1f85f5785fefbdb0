// Data-parallel training of a tiny linear model written with shard_map, as
// in JAX: each device holds a quarter of the batch, computes its mean
// squared error, and pmean makes it the global mean. grad of that loss is
// again a shard_map program in which each parameter's gradient is
// all-reduced once (the transpose of the pbroadcast that made the
// replicated parameters per-device values) and the loss path has no psum.
// The example prints the gradient program's all-reduces, trains for a few
// steps on 4 devices, and checks the gradient against the unsharded one.
#include <cmath>
#include <cstdio>
#include <string>

#include "frontend/autodiff.h"
#include "frontend/frontend.h"

namespace fe = sharc::frontend;
using sharc::hlo::Literal;
using sharc::hlo::Shape;

namespace {

constexpr int64_t kBatch = 16;
constexpr int64_t kFeatures = 3;

fe::Tensor SquaredError(fe::Tensor w, fe::Tensor b, fe::Tensor x, fe::Tensor y) {
  fe::Tensor e = fe::matmul(x, w) + b - y;
  return fe::mean(e * e);
}

// The loss of the whole batch, computed data-parallel over `mesh`'s axis
// "data": the batch is split, the parameters are replicated.
fe::Tensor DataParallelLoss(const sharc::spmd::Mesh& mesh, fe::Tensor w, fe::Tensor b,
                            fe::Tensor x, fe::Tensor y) {
  auto loss = fe::shard_map(
      [](fe::Tensor w, fe::Tensor b, fe::Tensor x, fe::Tensor y) {
        return fe::pmean(SquaredError(w, b, x, y), "data");
      },
      mesh,
      fe::SpecTree::list({fe::SpecTree(fe::P()), fe::SpecTree(fe::P()),
                          fe::SpecTree(fe::P("data")), fe::SpecTree(fe::P("data"))}),
      fe::SpecTree(fe::P()));
  return loss(w, b, x, y).leaf();
}

Literal Data(std::vector<int64_t> dims, int seed) {
  Literal l(Shape(sharc::hlo::PrimitiveType::kF32, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    l.data<float>()[i] = static_cast<float>(((i * 7 + seed * 3) % 13) - 6) / 6.0f;
  }
  return l;
}

}  // namespace

int main() {
  const sharc::spmd::Mesh mesh = sharc::spmd::Mesh::OneDimensional("data", 4);
  const Literal x = Data({kBatch, kFeatures}, 1);
  // Targets from a known model, so training has something to find.
  Literal y(Shape(sharc::hlo::PrimitiveType::kF32, {kBatch}));
  for (int64_t i = 0; i < kBatch; ++i) {
    const float* row = x.data<float>().data() + i * kFeatures;
    y.data<float>()[i] = 2.0f * row[0] - 1.0f * row[1] + 0.5f * row[2] + 0.25f;
  }
  Literal w = Literal::FromValues<float>({kFeatures}, {0, 0, 0});
  Literal b = Literal::FromValues<float>({}, {0});

  auto loss = [mesh](fe::Tensor w, fe::Tensor b, fe::Tensor x, fe::Tensor y) {
    return DataParallelLoss(mesh, w, b, x, y);
  };
  fe::Jitted value_and_grads = fe::jit(fe::value_and_grad(loss, {0, 1}));
  fe::Jitted grads = fe::jit(fe::grad(loss, {0, 1}));

  // The gradient program on 4 devices: its collectives. (value_and_grad
  // also has the loss's own psum, for the value.)
  const fe::ShapeTree shapes = fe::ShapeTree::list(
      {Shape(fe::f32, {kFeatures}), Shape(fe::f32, {}), Shape(fe::f32, {kBatch, kFeatures}),
       Shape(fe::f32, {kBatch})});
  auto compiled = grads.Compile(shapes);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s\n", std::string(compiled.status().message()).c_str());
    return 1;
  }
  int all_reduces = 0;
  std::printf("all-reduces of the partitioned gradient program:\n");
  for (const sharc::hlo::Computation* c : (*compiled)->per_device().computations()) {
    for (const sharc::hlo::Instruction* inst : c->instructions()) {
      if (inst->opcode() != sharc::hlo::Opcode::kAllReduce) continue;
      ++all_reduces;
      std::printf("  %s\n", inst->ToString().c_str());
    }
  }

  // A few steps of gradient descent.
  const float learning_rate = 0.3f;
  float first_loss = 0, last_loss = 0;
  for (int step = 0; step < 40; ++step) {
    auto out = value_and_grads(w, b, x, y);
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
      return 1;
    }
    const float value = (*out)[0].leaf().data<float>()[0];
    if (step == 0) first_loss = value;
    last_loss = value;
    const Literal& dw = (*out)[1][0].leaf();
    const Literal& db = (*out)[1][1].leaf();
    for (int64_t k = 0; k < kFeatures; ++k) w.data<float>()[k] -= learning_rate * dw.data<float>()[k];
    b.data<float>()[0] -= learning_rate * db.data<float>()[0];
    if (step % 10 == 0) std::printf("step %2d  loss %.5f\n", step, value);
  }
  std::printf("loss %.5f -> %.5f, w = [%.3f, %.3f, %.3f], b = %.3f\n", first_loss, last_loss,
              w.data<float>()[0], w.data<float>()[1], w.data<float>()[2], b.data<float>()[0]);

  // The same gradient without shard_map, on one device.
  auto sharded = grads(w, b, x, y);
  auto unsharded = fe::jit(fe::value_and_grad(SquaredError, {0, 1}))(w, b, x, y);
  if (!sharded.ok() || !unsharded.ok()) return 1;
  double max_error = 0;
  for (int k = 0; k < 2; ++k) {
    const Literal& s = (*sharded)[k].leaf();
    const Literal& u = (*unsharded)[1][k].leaf();
    for (int64_t i = 0; i < s.num_elements(); ++i) {
      max_error = std::fmax(max_error, std::fabs(s.GetAsDouble(i) - u.GetAsDouble(i)));
    }
  }
  std::printf("%d all-reduces (one per parameter gradient); gradient max |sharded - unsharded| "
              "= %.2g\n", all_reduces, max_error);
  const bool ok = all_reduces == 2 && max_error < 1e-4 && last_loss < 0.1f * first_loss;
  std::printf(ok ? "data-parallel gradient matches\n" : "MISMATCH\n");
  return ok ? 0 : 1;
}
