// The ops whose evaluators move elements as bytes or pass values through,
// whatever their element type: data movement, control flow, tuples, host
// transfers, async wrappers and the collectives that only move data. The
// types DispatchPrimitiveType does not take (complex and narrow ones) run
// through these as they are; complex_semantics.cc and
// narrow_type_semantics.cc add the ops that compute with each.
#pragma once

#include "hlo/ir/opcode.h"

namespace sharc::hlo {

bool MovesValuesAsBytes(Opcode op);

}  // namespace sharc::hlo
