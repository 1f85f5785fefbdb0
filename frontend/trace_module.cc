#include "frontend/trace_module.h"

#include "absl/strings/str_cat.h"
#include "hlo/verifier/verifier.h"

namespace sharc::frontend {
namespace {

absl::Status AtLocation(const std::source_location& loc, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(FormatLocation(loc), ": ", status.message()));
}

// One sharding per leaf from a prefix tree of specs.
absl::StatusOr<std::vector<hlo::Sharding>> LeafShardings(const SpecTree& specs,
                                                         const TreeStructure& structure,
                                                         const std::vector<hlo::Shape>& shapes,
                                                         const spmd::Mesh& mesh,
                                                         const char* what) {
  absl::StatusOr<std::vector<spmd::PartitionSpec>> expanded = ExpandPrefix(specs, structure);
  if (!expanded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", expanded.status().message()));
  }
  std::vector<hlo::Sharding> out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const spmd::PartitionSpec& spec = (*expanded)[i];
    absl::StatusOr<hlo::Sharding> sharding = spmd::ToSharding(mesh, spec, shapes[i].rank());
    if (!sharding.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(what, " leaf ", i, " (",
                                                     shapes[i].ToString(), ", ",
                                                     spec.ToString(), "): ",
                                                     sharding.status().message()));
    }
    out.push_back(*std::move(sharding));
  }
  return out;
}

}  // namespace

absl::StatusOr<TracedModule> TraceModule(const TreeFunction& fn, const ShapeTree& args,
                                         const TraceModuleOptions& options,
                                         std::source_location loc) {
  Tracer tracer(absl::StrCat("jit_", options.name), options.trace);
  if (options.mesh.has_value()) {
    if (absl::Status s = tracer.UseMesh(*options.mesh); !s.ok()) return AtLocation(loc, s);
  }
  absl::StatusOr<TracedFunction> traced =
      tracer.TraceFunction(fn, args, "main", /*tuple_root=*/true, loc);
  if (!traced.ok()) return traced.status();
  hlo::Module& module = tracer.module();
  module.set_entry(traced->computation);

  TracedModule result;
  result.inputs = traced->params;
  result.outputs = traced->results;
  result.output_shapes = traced->result_shapes;
  result.mesh = tracer.mesh();
  if ((options.in_shardings || options.out_shardings) && !result.mesh.has_value()) {
    return AtLocation(loc, absl::InvalidArgumentError(
                               "in_shardings/out_shardings need a mesh (set options.mesh)"));
  }
  if (options.in_shardings) {
    std::vector<hlo::Shape> shapes = Leaves(args);
    absl::StatusOr<std::vector<hlo::Sharding>> shardings =
        LeafShardings(*options.in_shardings, traced->params, shapes, *result.mesh, "in_shardings");
    if (!shardings.ok()) return AtLocation(loc, shardings.status());
    for (size_t i = 0; i < shardings->size(); ++i) {
      traced->computation->parameter(static_cast<int64_t>(i))->set_sharding((*shardings)[i]);
    }
  }
  if (options.out_shardings) {
    absl::StatusOr<std::vector<hlo::Sharding>> shardings =
        LeafShardings(*options.out_shardings, traced->results, traced->result_shapes,
                      *result.mesh, "out_shardings");
    if (!shardings.ok()) return AtLocation(loc, shardings.status());
    traced->computation->root()->set_sharding(hlo::Sharding::Tuple(*std::move(shardings)));
  }
  if (result.mesh.has_value()) {
    module.mutable_config().num_partitions = result.mesh->num_devices();
    module.mutable_config().mesh = result.mesh->axes();
  }
  if (absl::Status verified = hlo::VerifyModule(module); !verified.ok()) {
    return AtLocation(loc, absl::InternalError(absl::StrCat(
                               "the traced module does not verify: ", verified.message())));
  }
  result.module = tracer.ReleaseModule();
  return result;
}

}  // namespace sharc::frontend
