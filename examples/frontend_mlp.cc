// A two-layer MLP written with the C++ tracing API: prints the traced
// module (like jax.make_jaxpr), then runs it with jit on one device and on a
// 2-device mesh with the batch split over the "data" axis, and checks that
// both give the same numbers.
#include <cmath>
#include <cstdio>

#include "frontend/frontend.h"

namespace fe = sharc::frontend;
using sharc::hlo::Literal;
using sharc::hlo::Shape;

namespace {

// params = {w1, b1, w2, b2}; x = [batch, 4] -> [batch, 2] class scores.
fe::Tree Mlp(const fe::Tree& args) {
  const fe::Tree& params = args["params"];
  fe::Tensor x = args["x"].leaf();
  fe::Tensor h = fe::maximum(fe::matmul(x, params["w1"].leaf()) + params["b1"].leaf(), 0.0);
  fe::Tensor logits = fe::matmul(h, params["w2"].leaf()) + params["b2"].leaf();
  return fe::Tree::dict({{"logits", logits}, {"mean_score", fe::mean(fe::logistic(logits))}});
}

Literal Filled(std::vector<int64_t> dims, float scale, float offset) {
  Literal l(Shape(sharc::hlo::PrimitiveType::kF32, std::move(dims)));
  for (int64_t i = 0; i < l.num_elements(); ++i) {
    l.data<float>()[i] = offset + scale * static_cast<float>((i * 7) % 11);
  }
  return l;
}

}  // namespace

int main() {
  fe::HostTree args = fe::HostTree::dict(
      {{"params", fe::HostTree::dict({{"w1", Filled({4, 8}, 0.1f, -0.5f)},
                                      {"b1", Filled({8}, 0.01f, 0.0f)},
                                      {"w2", Filled({8, 2}, -0.2f, 0.9f)},
                                      {"b2", Filled({2}, 0.5f, -0.25f)}})},
       {"x", Filled({8, 4}, 0.3f, -1.0f)}});

  fe::JitOptions options;
  options.name = "mlp";
  options.mesh = sharc::spmd::Mesh::OneDimensional("data", 2);
  // The batch is split over "data"; the parameters are replicated.
  options.in_shardings = fe::SpecTree::dict(
      {{"params", fe::SpecTree(fe::P())}, {"x", fe::SpecTree(fe::P("data", fe::None))}});
  fe::Jitted sharded = fe::jit(Mlp, options);
  fe::Jitted single = fe::jit(Mlp);

  absl::StatusOr<std::unique_ptr<sharc::hlo::Module>> module = sharded.Lower(args);
  if (!module.ok()) {
    std::fprintf(stderr, "tracing failed: %s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", (*module)->ToString().c_str());

  absl::StatusOr<fe::HostTree> on_two = sharded(args);
  absl::StatusOr<fe::HostTree> on_one = single(args);
  if (!on_two.ok() || !on_one.ok()) {
    std::fprintf(stderr, "running failed: %s\n",
                 std::string((on_two.ok() ? on_one : on_two).status().message()).c_str());
    return 1;
  }
  const Literal& logits = (*on_two)["logits"].leaf();
  std::printf("logits on 2 devices: %s\n", logits.ToString().c_str());
  std::printf("mean score: %s\n", (*on_two)["mean_score"].leaf().ToString().c_str());
  const Literal& reference = (*on_one)["logits"].leaf();
  for (int64_t i = 0; i < logits.num_elements(); ++i) {
    if (std::fabs(logits.GetAsDouble(i) - reference.GetAsDouble(i)) > 1e-5) {
      std::fprintf(stderr, "element %ld differs: %g on 2 devices, %g on 1\n",
                   static_cast<long>(i), logits.GetAsDouble(i), reference.GetAsDouble(i));
      return 1;
    }
  }
  std::printf("2 devices match 1 device\n");
  return 0;
}
