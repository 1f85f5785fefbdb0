// Plumbing shared by the public transforms: checking that a computation
// belongs to the module, tracking the computations a transform creates so a
// failed or finished transform leaves no helpers behind, and turning a
// computation-level transform into a module-level one.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

// Runs `build` (which adds computations to `module` and returns the result
// computation); afterwards simplifies what it created and removes created
// computations the result does not reach (all of them on failure), and puts
// callees before callers.
absl::StatusOr<hlo::Computation*> RunTransform(
    hlo::Module& module, const hlo::Computation& f, const char* what,
    const std::function<absl::StatusOr<hlo::Computation*>()>& build);

// Like RunTransform for transforms with several result computations.
absl::StatusOr<std::vector<hlo::Computation*>> RunTransformMany(
    hlo::Module& module, const hlo::Computation& f, const char* what,
    const std::function<absl::StatusOr<std::vector<hlo::Computation*>>()>& build);

// Clones `module`, applies `transform` to the clone's entry and makes the
// result the entry of a module holding only what it needs.
absl::StatusOr<std::unique_ptr<hlo::Module>> TransformEntry(
    const hlo::Module& module,
    const std::function<absl::StatusOr<hlo::Computation*>(hlo::Module&, const hlo::Computation&)>&
        transform);

}  // namespace sharc::autodiff
