// Scalar reducer computations (`ROOT add(a, b)` on one element type) that
// passes need for the reduces and collectives they emit. One per opcode and
// type per module, found again by name so that passes share them.
#pragma once

#include "hlo/ir/module.h"

namespace sharc::spmd {

// The module's `sharc.<op>.<type>` computation, created (appended) on first
// use. `op` is a binary elementwise opcode (add, maximum, and, ...).
hlo::Computation* BinaryReducer(hlo::Module& module, hlo::Opcode op, hlo::PrimitiveType type);

}  // namespace sharc::spmd
