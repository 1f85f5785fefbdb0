// The device variance autodiff needs inside shard_map bodies it builds or
// transposes: for every value, the mesh axes along which it may differ
// between devices. spmd's variance pass (spmd/variance.h) types user
// programs and inserts the pbroadcasts they need; autodiff must not depend
// on spmd, and only needs to *read* variance: which axes a residual varies
// over (its spec when it crosses from the primal shard_map to the tangent
// one), whether a linear value's casts are explicit before transposing, and
// the annotations of the bodies it creates. Both read the one analysis,
// hlo/analysis/device_variance_analysis.h; this adapts it to autodiff's
// per-parameter axes and writes its results into the bodies autodiff builds.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "autodiff/shard_map_region.h"
#include "hlo/analysis/device_variance_analysis.h"

namespace sharc::autodiff {

class BodyVariance {
 public:
  // Propagates through `body` (and its calls, loops and branches) from
  // parameter i varying over params[i].
  static absl::StatusOr<BodyVariance> Infer(const Computation& body,
                                            const std::vector<Axes>& params,
                                            const hlo::ManualMesh& mesh);

  // The axes `value` may vary over (the union over a tuple's elements).
  Axes Of(const Instruction* value) const { return analysis_.Of(value); }
  // Per element of a tuple-shaped value (one entry for an array), so an
  // invariant loop counter stays invariant beside a varying accumulator.
  const std::vector<Axes>& Elements(const Instruction* value) const {
    return analysis_.Leaves(value);
  }

  // Writes Of() into Instruction::variance (the printed `{V:i}`) of every
  // instruction of `body` and the computations it calls.
  void Annotate(Computation& body) const;

 private:
  explicit BodyVariance(hlo::DeviceVarianceAnalysis analysis) : analysis_(std::move(analysis)) {}
  hlo::DeviceVarianceAnalysis analysis_;
};

}  // namespace sharc::autodiff
