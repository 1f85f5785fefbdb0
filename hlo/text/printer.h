// Canonical HLO text. print(parse(text)) is a fixed point, and
// parse(print(module)) gives back an equal module.
//
// Canonical form: `HloModule name[, header attrs]`, a blank line between
// computations, callees before callers, `ENTRY` on the entry, two-space
// indented instructions written `[ROOT ]%name = shape opcode(%operands),
// attrs...` with attributes in schema order followed by `sharding=`,
// `frontend_attributes=`, `metadata=`, `backend_config=`. Layouts are never
// printed (sharc ignores them).
#pragma once

#include <string>

#include "hlo/ir/instruction.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

std::string PrintModule(const Module& module);
std::string PrintComputation(const Computation& computation, bool is_entry);
// One instruction without the ROOT marker.
std::string PrintInstruction(const Instruction& instruction);
// The attribute value as written after `name=`.
std::string PrintAttributeValue(const AttrValue& value, AttrKind kind);

}  // namespace sharc::hlo
