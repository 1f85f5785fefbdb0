// The JVP of an op that is linear in some of its operands (data movement,
// dot, sums, the MapReduce blocks): the same op with each linear operand
// replaced by its tangent and the others (indices, predicates) read as
// residuals.
#pragma once

#include <vector>

#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

// `linear[i]` marks the operands the op is linear in (they get their
// tangents); the others are read as residuals.
Instruction* SameOpOnTangents(const Instruction& inst, const JvpArgs& args, JvpContext& ctx,
                              const std::vector<bool>& linear);

// A rule applying SameOpOnTangents with every operand linear except those in
// `residual_operands` (and, for variadic ops, every operand from
// `residuals_from` on).
TangentFn LinearIn(std::vector<int64_t> residual_operands, int64_t residuals_from = -1);

}  // namespace sharc::autodiff
