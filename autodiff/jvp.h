// Forward-mode differentiation (JVP) of computations and modules: the
// derivative program computes f(x) and df(x)·t together. Rules per op are in
// jvp_rule.h; the result is an ordinary module that `sharc run` executes and
// that can be differentiated again.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::autodiff {

// Adds `<f>.jvp` to `module`: parameters (x_0..x_{n-1}, t_0..t_{n-1}) with
// t_i shaped like x_i, result (f(x), df(x)·t). Tangents of integer and pred
// parameters are ignored (their derivative is zero). `f` must belong to
// `module`.
absl::StatusOr<hlo::Computation*> Jvp(hlo::Module& module, const hlo::Computation& f);

// A new module whose entry is the JVP of `module`'s entry.
absl::StatusOr<std::unique_ptr<hlo::Module>> JvpModule(const hlo::Module& module);

}  // namespace sharc::autodiff
