#include "driver/device_arguments.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "spmd/partition/device_values.h"
#include "spmd/sharding_util.h"

namespace sharc::driver {

absl::StatusOr<std::vector<runtime::Buffer>> DeviceArgumentBuffers(
    const hlo::Computation& entry, const std::vector<hlo::Literal>& args, int64_t d) {
  std::vector<runtime::Buffer> out;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Sharding sharding = spmd::ShardingOrReplicated(*entry.parameter(i));
    absl::StatusOr<hlo::Literal> part =
        spmd::ShardLiteral(args[static_cast<size_t>(i)], sharding, d);
    if (!part.ok()) {
      return absl::Status(part.status().code(),
                          absl::StrCat("splitting parameter ", i, " for device ", d, ": ",
                                       part.status().message()));
    }
    ASSIGN_OR_RETURN(runtime::Buffer buffer, runtime::Buffer::FromLiteral(*part));
    out.push_back(std::move(buffer));
  }
  return out;
}

absl::StatusOr<hlo::Literal> DeviceResultLiteral(const runtime::Buffer& result) {
  if (!result.is_tuple()) return result.ToLiteral();
  std::vector<hlo::Literal> elements;
  for (const runtime::Buffer& e : result.elements()) {
    ASSIGN_OR_RETURN(hlo::Literal l, e.ToLiteral());
    elements.push_back(std::move(l));
  }
  return hlo::Literal::Tuple(std::move(elements));
}

}  // namespace sharc::driver
