// Reverse-mode differentiation: VJP and gradients, built as linearize then
// transpose (both in one pass: the primal part is emitted into the result and
// the linear part is transposed straight after it, reading the primal values
// as residuals). Derivatives are ordinary modules: Grad(Grad(...)) works.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

// Adds `<f>.vjp` to `module`: parameters (x_0..x_{n-1}, ct) with ct shaped
// like f's result, result (f(x), ct·df/dx_0, ..., ct·df/dx_{n-1}); integer
// parameters get zero cotangents.
absl::StatusOr<hlo::Computation*> Vjp(hlo::Module& module, const hlo::Computation& f);

// Adds `<f>.grad` to `module`: f's parameters, result the tuple of gradients
// with respect to parameters `wrt` (empty: every floating-point or complex
// parameter).
// f must return a floating-point scalar.
absl::StatusOr<hlo::Computation*> Grad(hlo::Module& module, const hlo::Computation& f,
                                       std::vector<int64_t> wrt = {});

// Like Grad, with the value: result (f(x), (gradients...)).
absl::StatusOr<hlo::Computation*> ValueAndGrad(hlo::Module& module, const hlo::Computation& f,
                                               std::vector<int64_t> wrt = {});

// A new module whose entry is the gradient of `module`'s entry: same
// parameters, result the tuple of gradients w.r.t. `wrt` (see Grad).
absl::StatusOr<std::unique_ptr<hlo::Module>> GradModule(const hlo::Module& module,
                                                        std::vector<int64_t> wrt = {});

}  // namespace sharc::autodiff
