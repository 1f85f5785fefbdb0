#include "autodiff/shard_map_variance.h"

#include <utility>

#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"

namespace sharc::autodiff {
namespace {

void AnnotateComputation(Computation& computation, const BodyVariance& variance, int depth) {
  if (depth > 64) return;
  for (Instruction* inst : computation.instructions()) {
    inst->set_variance(variance.Of(inst));
    for (Computation* callee : inst->called_computations()) {
      AnnotateComputation(*callee, variance, depth + 1);
    }
  }
}

}  // namespace

absl::StatusOr<BodyVariance> BodyVariance::Infer(const Computation& body,
                                                 const std::vector<Axes>& params,
                                                 const hlo::ManualMesh& mesh) {
  std::vector<hlo::LeafVariance> args;
  for (const Axes& p : params) args.push_back({p});
  ASSIGN_OR_RETURN(hlo::DeviceVarianceAnalysis analysis,
                   hlo::DeviceVarianceAnalysis::Run(body, args, mesh));
  return BodyVariance(std::move(analysis));
}

void BodyVariance::Annotate(Computation& body) const { AnnotateComputation(body, *this, 0); }

}  // namespace sharc::autodiff
