#include "autodiff/linearize.h"

#include "absl/strings/str_cat.h"
#include "autodiff/linearizer.h"
#include "autodiff/transform_util.h"
#include "autodiff/transposer.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {

absl::StatusOr<Linearization> Linearize(Module& module, const Computation& f) {
  Linearization out;
  ASSIGN_OR_RETURN(
      std::vector<Computation*> results,
      RunTransformMany(module, f, "linearize",
                       [&]() -> absl::StatusOr<std::vector<Computation*>> {
                         std::vector<bool> all(static_cast<size_t>(f.num_parameters()), true);
                         ASSIGN_OR_RETURN(LinearizedCallee lc,
                                          LinearizeComputation(f, all, /*flatten=*/false));
                         out.num_residuals = lc.num_residuals;
                         return std::vector<Computation*>{lc.primal, lc.linear};
                       }));
  out.primal = results[0];
  out.linear = results[1];
  return out;
}

absl::StatusOr<Computation*> Transpose(Module& module, const Computation& linear,
                                       int64_t num_linear) {
  if (num_linear < 0 || num_linear > linear.num_parameters()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "transpose of '", linear.name(), "': ", num_linear, " linear parameters requested, it has ",
        linear.num_parameters()));
  }
  return RunTransform(module, linear, "transpose", [&]() -> absl::StatusOr<Computation*> {
    std::vector<LinearTree> trees;
    for (int64_t i = 0; i < linear.num_parameters(); ++i) {
      trees.push_back(LinearTree::Uniform(linear.parameter(i)->shape(), i < num_linear));
    }
    ASSIGN_OR_RETURN(TransposedCallee t, TransposeComputation(linear, trees));
    return t.computation;
  });
}

}  // namespace sharc::autodiff
