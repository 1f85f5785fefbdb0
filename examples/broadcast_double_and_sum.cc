// The DrJAX papers' first example: broadcast x to 3 groups, double it in
// each, sum the groups back: 6x. Prints the traced program, which keeps the
// three blocks (like the papers' jaxpr), and runs it on a 3-device mesh.
#include <cstdio>

#include "frontend/frontend.h"
#include "frontend/mapreduce.h"

namespace fe = sharc::frontend;
namespace mr = sharc::frontend::mapreduce;

int main() {
  mr::Program clients("clients", 3);
  fe::JitOptions options;
  options.name = "broadcast_double_and_sum";
  options.mesh = sharc::spmd::Mesh::OneDimensional("clients", 3);
  fe::Jitted f = fe::jit(clients.wrap([](fe::Tensor x) {
                           fe::Tensor placed = mr::broadcast(x);
                           fe::Tensor doubled = mr::map_fn([](fe::Tensor v) { return v * 2.0f; }, placed);
                           return mr::reduce_sum(doubled);
                         }),
                         options);
  const sharc::hlo::Literal x = sharc::hlo::Literal::Vector<float>({1.0f, -2.0f, 0.5f});
  auto module = f.Lower(fe::HostTree::list({x}));
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", (*module)->ToString().c_str());
  auto out = f(x);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  const sharc::hlo::Literal& y = out->leaf();
  std::printf("x = %s\nbroadcast_double_and_sum(x) = %s\n", x.ValuesToString().c_str(),
              y.ValuesToString().c_str());
  for (int64_t i = 0; i < y.num_elements(); ++i) {
    if (y.GetAsDouble(i) != 6 * x.GetAsDouble(i)) return 1;
  }
  std::printf("equals 6x\n");
  return 0;
}
