// The narrow types (f8, f4, s2/s4, u2/u4; hlo/ir/narrow_types.h) at run time:
// convert and select handle their bytes (narrow_type_semantics.cc), the data
// movement ops move them as bytes, and arithmetic on them has been rewritten
// into f32 / s32 / u32 arithmetic between converts before anything runs
// (hlo/passes/upcast_narrow_types.h). Any other op meeting one is refused.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

class OpRegistry;

// Wraps convert's and select's definitions so they read and write narrow
// values; called once, after every family file registered its ops.
void AddNarrowTypeSemantics(OpRegistry& registry);

// True for the ops that handle narrow values themselves (their bytes); the
// upcast pass leaves them alone.
bool HandlesNarrowValues(const Instruction& inst);

// OK unless `inst` has a narrow operand or result and is not one of those
// ops: then Unimplemented "unsupported: <type> <op>", naming the instruction.
absl::Status CheckNarrowTypeSupported(const Instruction& inst);

}  // namespace sharc::hlo
