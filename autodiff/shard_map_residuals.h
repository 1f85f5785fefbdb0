// How the residuals of a linearized shard_map body cross from the primal
// shard_map, which returns them, to the tangent shard_map, which reads
// them. Each crosses as a global value whose spec names the axes it varies
// over (stacked along its first dimension), so the tangent body is typed
// exactly like the primal one. Three refinements keep that cheap:
//  - a pbroadcast residual crosses as its operand, invariant where it is,
//    and the tangent body casts it again: an invariant value is not copied
//    once per device;
//  - a residual that is a body parameter is not returned at all: the
//    tangent shard_map reads the same operand;
//  - constants (and broadcasts of constants) do not cross at all: the
//    tangent body rebuilds them;
//  - a varying scalar, which no dimension can split, crosses as a [1]
//    array reshaped on both sides.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/jvp_rule.h"
#include "autodiff/shard_map_variance.h"

namespace sharc::autodiff {

struct ResidualCrossing {
  // Per residual still crossing, in the order of the linear computation's
  // residual parameters:
  std::vector<hlo::AxisSpec> specs;  // its spec (for a parameter, use the operand's)
  std::vector<Axes> axes;            // the axes it varies over
  // The body parameter it is (read from the shard_map's operand), or -1:
  // the next residual output of the primal shard_map.
  std::vector<int64_t> parameter;
};

// Rewrites `lc` (its primal root, its linear computation, which may be
// replaced by a rebuilt one, and num_residuals) so that its residuals cross
// as above. `variance` types lc.primal; the linear computation's residual
// parameters start at `first_residual_param`.
absl::StatusOr<ResidualCrossing> CrossResiduals(LinearizedCallee& lc, const BodyVariance& variance,
                                                int64_t first_residual_param);

}  // namespace sharc::autodiff
