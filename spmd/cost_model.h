// FLOP and byte counts per op, registered once per opcode (DESIGN.md: "the
// cost model registers FLOP/byte counts"). Counts are for the instruction as
// written, i.e. per device when applied to a partitioned program.
#pragma once

#include "hlo/ir/instruction.h"

namespace sharc::spmd {

struct OpCost {
  double flops = 0;
  double transcendentals = 0;
  double bytes_accessed = 0;  // operands read + result written
};

OpCost CostOf(const hlo::Instruction& inst);
// True if the opcode has a registered cost function (completeness test).
bool HasCostFunction(hlo::Opcode opcode);

}  // namespace sharc::spmd
