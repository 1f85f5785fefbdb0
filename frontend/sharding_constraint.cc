#include "frontend/sharding_constraint.h"

#include "absl/strings/str_cat.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"
#include "hlo/ops/custom_call_targets.h"

namespace sharc::frontend {

Tensor with_sharding_constraint(const Tensor& x, const spmd::Mesh& mesh,
                                const spmd::PartitionSpec& spec, std::source_location loc) {
  Tracer* tracer = Tracer::Current();
  if (tracer == nullptr) {
    ThrowTraceError(loc, "with_sharding_constraint outside of a traced function");
  }
  absl::StatusOr<hlo::Sharding> sharding = spmd::ToSharding(mesh, spec, x.rank());
  if (!sharding.ok()) {
    ThrowTraceError(loc, absl::StrCat("with_sharding_constraint(", x.ToString(), ", ",
                                      spec.ToString(), "): ", sharding.status().message()));
  }
  ThrowIfError(tracer->UseMesh(mesh), loc);
  Tensor annotated = Emit(hlo::Opcode::kCustomCall, {x},
                          {{"custom_call_target", std::string(hlo::kShardingTarget)}}, x.shape(), loc);
  annotated.instruction()->set_sharding(*sharding);
  return annotated;
}

}  // namespace sharc::frontend
