// DrJAX's parallel MAML: every task (a group placed at "tasks") adapts the
// shared model with one inner gradient step on its support set, and the
// meta-loss is the mean over tasks of the adapted model's loss on the query
// set. Its gradient is a second derivative through map_fn. Prints the traced
// meta-loss (the blocks are visible), then takes a few meta-gradient steps on
// a 4-device mesh and checks each against the same step on one device.
#include <cmath>
#include <cstdio>
#include <vector>

#include "frontend/autodiff.h"
#include "frontend/frontend.h"
#include "frontend/mapreduce.h"

namespace fe = sharc::frontend;
namespace mr = sharc::frontend::mapreduce;
using sharc::hlo::Literal;

namespace {

constexpr int64_t kTasks = 8;
constexpr int64_t kExamples = 6;
constexpr int64_t kFeatures = 3;
constexpr float kInnerRate = 0.05f;
constexpr float kOuterRate = 0.1f;

// Mean squared error of a linear model on one set of examples.
fe::Tensor SetLoss(fe::Tensor w, fe::Tensor x, fe::Tensor y) {
  fe::Tensor error = fe::matmul(x, w) - y;
  return fe::mean(error * error);
}

// One task: adapt on the support set, evaluate on the query set.
fe::Tensor TaskLoss(fe::Tensor w, fe::Tensor support_x, fe::Tensor support_y,
                    fe::Tensor query_x, fe::Tensor query_y) {
  fe::Tensor inner_grad = fe::grad(SetLoss)(w, support_x, support_y).leaf();
  fe::Tensor adapted = w - inner_grad * kInnerRate;
  return SetLoss(adapted, query_x, query_y);
}

// Task t's data: y = x . w_t with a task-specific w_t.
Literal Filled(std::vector<int64_t> dims, int salt) {
  Literal l(sharc::hlo::Shape(sharc::hlo::PrimitiveType::kF32, dims));
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    l.data<float>()[i] = std::sin(0.7f * static_cast<float>(i) + static_cast<float>(salt));
  }
  return l;
}

Literal Targets(const Literal& x, int salt) {
  const int64_t tasks = x.shape().dim(0), examples = x.shape().dim(1);
  Literal y(sharc::hlo::Shape(sharc::hlo::PrimitiveType::kF32, {tasks, examples}));
  for (int64_t t = 0; t < tasks; ++t) {
    for (int64_t e = 0; e < examples; ++e) {
      float v = 0;
      for (int64_t f = 0; f < kFeatures; ++f) {
        const float w_t = 1.0f + 0.25f * static_cast<float>(t) - 0.5f * static_cast<float>(f);
        v += w_t * x.data<float>()[(t * examples + e) * kFeatures + f];
      }
      y.data<float>()[t * examples + e] = v + 0.01f * static_cast<float>(salt);
    }
  }
  return y;
}

}  // namespace

int main() {
  mr::Program tasks("tasks", kTasks);
  auto meta_loss = tasks.wrap([](fe::Tensor w, fe::Tensor sx, fe::Tensor sy, fe::Tensor qx,
                                 fe::Tensor qy) {
    fe::Tree per_task = fe::Tree::list({mr::broadcast(w), sx, sy, qx, qy});
    return mr::reduce_mean(mr::map_fn(TaskLoss, per_task).leaf());
  });
  // One meta-step: the server moves the model against the meta-gradient.
  auto meta_step = [meta_loss](fe::Tensor w, fe::Tensor sx, fe::Tensor sy, fe::Tensor qx,
                               fe::Tensor qy) {
    fe::Tree value_and_grad = fe::value_and_grad(meta_loss)(w, sx, sy, qx, qy);
    return fe::Tree::list({value_and_grad[0], fe::Tree(w - value_and_grad[1].leaf() * kOuterRate)});
  };

  const Literal support_x = Filled({kTasks, kExamples, kFeatures}, 1);
  const Literal query_x = Filled({kTasks, kExamples, kFeatures}, 2);
  const Literal support_y = Targets(support_x, 1);
  const Literal query_y = Targets(query_x, 2);
  Literal w = Literal::Vector<float>({0.0f, 0.0f, 0.0f});

  fe::JitOptions sharded_options;
  sharded_options.name = "maml_step";
  sharded_options.mesh = sharc::spmd::Mesh::OneDimensional("tasks", 4);
  fe::Jitted sharded = fe::jit(meta_step, sharded_options);
  fe::Jitted single = fe::jit(meta_step);

  fe::Jitted loss_only = fe::jit(meta_loss);
  auto module = loss_only.Lower(fe::HostTree::list({w, support_x, support_y, query_x, query_y}));
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", (*module)->ToString().c_str());

  double first_loss = 0, last_loss = 0;
  for (int step = 0; step < 5; ++step) {
    auto on_mesh = sharded(w, support_x, support_y, query_x, query_y);
    auto on_one = single(w, support_x, support_y, query_x, query_y);
    if (!on_mesh.ok() || !on_one.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string((on_mesh.ok() ? on_one.status() : on_mesh.status()).message()).c_str());
      return 1;
    }
    const double loss = (*on_mesh)[0].leaf().GetAsDouble(0);
    const Literal& next = (*on_mesh)[1].leaf();
    const Literal& next_one = (*on_one)[1].leaf();
    for (int64_t i = 0; i < next.num_elements(); ++i) {
      if (std::abs(next.GetAsDouble(i) - next_one.GetAsDouble(i)) > 1e-5) {
        std::fprintf(stderr, "step %d: 4 devices and 1 device disagree at %lld\n", step,
                     static_cast<long long>(i));
        return 1;
      }
    }
    std::printf("meta step %d: meta-loss %.6f\n", step, loss);
    if (step == 0) first_loss = loss;
    last_loss = loss;
    w = next;
  }
  std::printf("4 devices match 1 device; meta-loss %.6f -> %.6f\n", first_loss, last_loss);
  return last_loss < first_loss ? 0 : 1;
}
