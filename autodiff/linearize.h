// Linearize and Transpose, the two halves of reverse mode, as public
// transforms: linearize splits f into its primal part and a linear tangent
// program reading saved residuals; transpose turns a linear program into its
// adjoint (JAX's recipe: vjp = transpose . linearize).
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

struct Linearization {
  // (x...) -> (f(x), r_0, ..., r_{k-1})
  hlo::Computation* primal = nullptr;
  // (t_0..t_{n-1}, r_0..r_{k-1}) -> df(x)·t, linear in t
  hlo::Computation* linear = nullptr;
  int64_t num_residuals = 0;
};

// Adds both computations to `module` (`f` must belong to it).
absl::StatusOr<Linearization> Linearize(hlo::Module& module, const hlo::Computation& f);

// Transposes a computation linear in its first `num_linear` parameters:
// (l_0..l_{k-1}, r...) -> y becomes (r..., ct) -> (ct_l_0, ..., ct_l_{k-1}),
// the adjoint map. Fails naming the op if the program is not linear in them.
absl::StatusOr<hlo::Computation*> Transpose(hlo::Module& module, const hlo::Computation& linear,
                                            int64_t num_linear);

}  // namespace sharc::autodiff
