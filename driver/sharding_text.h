// Shardings and meshes as the C API and the Python package take them: HLO sharding text
// ("{devices=[2,1]0,1}") or a partition spec ("P(data, None)") over the
// module's named mesh, and meshes in the `--mesh` syntax.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/ir/sharding.h"

namespace sharc::driver {

// The sharding `text` denotes for a value of `shape` in `module`, checked
// against the shape (rank, tuple leaves). Errors start with `what`.
absl::StatusOr<hlo::Sharding> ParseShardingForValue(std::string_view text,
                                                    const hlo::Module& module,
                                                    const hlo::Shape& shape,
                                                    const std::string& what);

// Sets the module header's mesh and num_partitions from "clients=2,data=2".
absl::Status SetModuleMesh(hlo::Module& module, std::string_view text);

}  // namespace sharc::driver
