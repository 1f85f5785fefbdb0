// The complex meaning of the ops sharc runs on c64/c128 values
// (complex_semantics.cc), and the check that a module uses no other.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

class OpRegistry;

// Wraps the registered definitions of the ops that compute with complex
// values; called once, after every family file registered its ops.
void AddComplexSemantics(OpRegistry& registry);

// OK unless `inst` has a complex operand or result and is not one of the ops
// sharc computes complex values with: then Unimplemented
// "unsupported: complex <op>", naming the instruction.
absl::Status CheckComplexSupported(const Instruction& inst);

}  // namespace sharc::hlo
