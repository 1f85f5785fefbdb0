// The scalar reducer computations (`ROOT add(a, b)` on one element type) that
// reduces and collectives call. Passes and the frontend share one per opcode
// and type per module, found again by name.
#pragma once

#include "hlo/ir/module.h"

namespace sharc::hlo {

// The module's `sharc.<op>.<type>` computation, created (appended) on first
// use. `op` is a binary elementwise opcode (add, maximum, and, ...).
Computation* BinaryReducer(Module& module, Opcode op, PrimitiveType type);

}  // namespace sharc::hlo
