// Common-subexpression elimination (XLA's HloCSE): two instructions that
// compute the same value from the same operands become one; the later one's
// users read the earlier one and the later one goes.
//
//   before:                                   after:
//     %a = f32[4] parameter(0)                  %a = f32[4] parameter(0)
//     %e1 = f32[4] exponential(%a)              %e1 = f32[4] exponential(%a)
//     %e2 = f32[4] exponential(%a)              ROOT %s = f32[4] add(%e1, %e1)
//     ROOT %s = f32[4] add(%e1, %e2)
//
// "The same" is exact: opcode, shape, operands, attributes, constant
// payload, sharding, backend config and frontend attributes all equal, so
// a merge never changes a value nor the layout a user asked for. Never
// merged: parameters, side-effecting ops, collectives, custom calls, `rng`
// (each draw is a new value) and ops calling a computation that holds any
// of these.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pass.h"

namespace sharc::hlo {

// Merges `computation`'s duplicate instructions; true if any went.
bool EliminateCommonSubexpressions(Computation& computation);

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace sharc::hlo
