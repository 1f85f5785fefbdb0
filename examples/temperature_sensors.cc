// DrJAX's temperature-sensors example: 100 sensors (the clients, spread over
// a 4-device mesh) each report whether their reading exceeds a threshold the
// server broadcasts; the mean is the fraction above it. Readings 0..99 and a
// threshold of 24 give 0.75.
#include <cstdio>

#include "frontend/frontend.h"
#include "frontend/mapreduce.h"

namespace fe = sharc::frontend;
namespace mr = sharc::frontend::mapreduce;

int main() {
  mr::Program sensors("clients", 100);
  fe::JitOptions options;
  options.name = "temperature_sensors";
  options.mesh = sharc::spmd::Mesh::OneDimensional("clients", 4);
  // Each device holds the readings of its 25 sensors.
  options.in_shardings = fe::SpecTree::list({fe::SpecTree(sharc::spmd::PartitionSpec({{"clients"}})),
                                             fe::SpecTree(sharc::spmd::PartitionSpec())});
  fe::Jitted f = fe::jit(
      sensors.wrap([](fe::Tensor readings, fe::Tensor threshold) {
        fe::Tree per_sensor = fe::Tree::list({readings, mr::broadcast(threshold)});
        fe::Tensor above = mr::map_fn(
            [](fe::Tensor reading, fe::Tensor t) {
              return fe::where(reading > t, fe::ones_like(reading), fe::zeros_like(reading));
            },
            per_sensor).leaf();
        return mr::reduce_mean(above);
      }),
      options);
  std::vector<float> values(100);
  for (int i = 0; i < 100; ++i) values[i] = static_cast<float>(i);
  const sharc::hlo::Literal readings = sharc::hlo::Literal::Vector<float>(values);
  const sharc::hlo::Literal threshold = sharc::hlo::Literal::Scalar<float>(24.0f);
  auto module = f.Lower(fe::HostTree::list({readings, threshold}));
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("%s\n", (*module)->ToString().c_str());
  auto out = f(readings, threshold);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  const double fraction = out->leaf().GetAsDouble(0);
  std::printf("fraction of sensors above 24: %.2f\n", fraction);
  return fraction == 0.75 ? 0 : 1;
}
