// Deterministic synthetic inputs for `sharc run --random-inputs[=SEED]` (and
// later `compare`): small values so that results stay readable and exact
// enough to compare across backends.
#pragma once

#include <cstdint>

#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"

namespace sharc::tools {

// A literal of `shape` filled from (seed, stream): floats are multiples of
// 1/256 in [-1, 1) (exact in every float type, bf16 included), signed
// integers in [-8, 8), unsigned in [0, 16), pred true or false. The same
// arguments always give the same values on every platform.
hlo::Literal MakeRandomLiteral(const hlo::Shape& shape, uint64_t seed, uint64_t stream);

}  // namespace sharc::tools
