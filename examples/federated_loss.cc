// FAX's tutorial loss with its federated names: the server broadcasts a
// linear model to 3 clients, each computes half its squared error on its own
// example, the server averages: 87.16667. Runs the three lowerings
// (annotated, ns, loop) on a 3-device mesh; they agree.
#include <cmath>
#include <cstdio>

#include "frontend/frontend.h"
#include "frontend/mapreduce.h"

namespace fe = sharc::frontend;
namespace mr = sharc::frontend::mapreduce;
using sharc::spmd::MapReduceMode;

namespace {

fe::Tensor ClientLoss(fe::Tensor model, fe::Tensor example) {
  fe::Tensor error = fe::sum(model * example) - 1.0f;
  return error * error * 0.5f;
}

}  // namespace

int main() {
  mr::Program program = mr::federated_program(3);
  auto federated_loss = program.wrap([](fe::Tensor model, fe::Tensor data) {
    fe::Tree at_clients = fe::Tree::list({mr::federated_broadcast(model).leaf(), data});
    return mr::federated_mean(mr::federated_map(ClientLoss, at_clients)).leaf();
  });
  const sharc::hlo::Literal model = sharc::hlo::Literal::Vector<float>({2, -1});
  const sharc::hlo::Literal data =
      sharc::hlo::Literal::FromValues<float>({3, 2}, std::vector<float>{1, 2, 3, -4, -7, 6});
  bool printed = false;
  for (MapReduceMode mode : {MapReduceMode::kAnnotated, MapReduceMode::kNoSharding,
                             MapReduceMode::kLoop}) {
    fe::JitOptions options;
    options.name = "federated_loss";
    options.mesh = sharc::spmd::Mesh::OneDimensional("clients", 3);
    options.mapreduce_mode = mode;
    fe::Jitted f = fe::jit(federated_loss, options);
    if (!printed) {
      auto module = f.Lower(fe::HostTree::list({model, data}));
      if (!module.ok()) {
        std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
        return 1;
      }
      std::printf("%s\n", (*module)->ToString().c_str());
      printed = true;
    }
    auto out = f(model, data);
    if (!out.ok()) {
      std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
      return 1;
    }
    const double loss = out->leaf().GetAsDouble(0);
    std::printf("%-9s federated loss = %.5f\n", sharc::spmd::MapReduceModeName(mode).c_str(), loss);
    if (std::abs(loss - 87.16667) > 1e-4) return 1;
  }
  return 0;
}
