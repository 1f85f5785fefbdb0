// Linearity: which values of a program (per tuple leaf) are linear in its
// linear inputs, the transposer's first question. A value is linear where
// any operand is; tuples, calls, loops and branches pass linearity on leaf
// by leaf through their declared data-flow edges (hlo/ops/data_flow.h), on
// the one walk of hlo/analysis/data_flow_walk.h.
//
//   %t = (f32[], f32[]) tuple(%x, %r)     // %x linear, %r a residual
//   %o = (f32[], f32[]) opt-barrier(%t)   // (linear, not linear)
//   %b = f32[] get-tuple-element(%o), index=1   // not linear
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

// Which values of `computation` are linear, given its parameters'. With
// `trees`, every value reached (the computations it calls included).
absl::StatusOr<LinearTree> AnalyzeLinearity(
    const Computation& computation, const std::vector<LinearTree>& params,
    absl::flat_hash_map<const Instruction*, LinearTree>* trees = nullptr);

}  // namespace sharc::autodiff
