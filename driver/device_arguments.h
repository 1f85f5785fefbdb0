// Moving global values onto a mesh's devices and back: a global argument is
// split by its parameter's sharding into each device's part, and the
// devices' results are read back as literals for reassembly.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/sharding.h"
#include "runtime/buffer.h"

namespace sharc::driver {

// Device `d`'s part of every entry argument, by the parameters' shardings.
absl::StatusOr<std::vector<runtime::Buffer>> DeviceArgumentBuffers(
    const hlo::Computation& entry, const std::vector<hlo::Literal>& args, int64_t d);

// The root's value on one device as a literal (a tuple root gives a tuple).
absl::StatusOr<hlo::Literal> DeviceResultLiteral(const runtime::Buffer& result);

}  // namespace sharc::driver
