#include "frontend/shard_map.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/trace_error.h"
#include "frontend/tracer.h"
#include "hlo/ops/shard_map_attrs.h"
#include "spmd/variance.h"

namespace sharc::frontend {
namespace {

// The meshes of the shard_map bodies being traced on this thread, innermost
// last.
thread_local std::vector<const spmd::Mesh*> active_meshes;

// While a body is traced, its collectives are checked against the
// shard_map's mesh. The op table finds a collective's mesh through the
// shard_map that calls its computation, which does not exist until the body
// is traced, so hlo::TracingMeshScope names it meanwhile.
class BodyScope {
 public:
  explicit BodyScope(const spmd::Mesh& mesh) : tracing_(mesh.axes()) {
    active_meshes.push_back(&mesh);
  }
  ~BodyScope() { active_meshes.pop_back(); }
  BodyScope(const BodyScope&) = delete;
  BodyScope& operator=(const BodyScope&) = delete;

 private:
  hlo::TracingMeshScope tracing_;
};

// One spec per leaf of `structure`, each checked against the mesh and the
// leaf's rank; `what` is "in_specs" or "out_specs".
std::vector<hlo::AxisSpec> LeafSpecs(const SpecTree& specs, const TreeStructure& structure,
                                     const std::vector<hlo::Shape>& shapes,
                                     const spmd::Mesh& mesh, const char* what,
                                     const std::source_location& loc) {
  absl::StatusOr<std::vector<spmd::PartitionSpec>> expanded = ExpandPrefix(specs, structure);
  if (!expanded.ok()) {
    ThrowTraceError(loc, absl::StrCat("shard_map ", what, ": ", expanded.status().message()));
  }
  std::vector<hlo::AxisSpec> out;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const spmd::PartitionSpec& spec = (*expanded)[i];
    if (absl::Status ok = spmd::ToSharding(mesh, spec, shapes[i].rank()).status(); !ok.ok()) {
      ThrowTraceError(loc, absl::StrCat("shard_map ", what, " leaf ", i, " (",
                                        shapes[i].ToString(), ", ", spec.ToString(), ") on mesh ",
                                        mesh.ToString(), ": ", ok.message()));
    }
    out.push_back(spec.dims());
  }
  return out;
}

}  // namespace

const spmd::Mesh* ActiveShardMapMesh() {
  return active_meshes.empty() ? nullptr : active_meshes.back();
}

Tree ShardMapped::operator()(const Tree& call_args) const {
  const std::source_location& loc = loc_;
  Tracer* tracer = Tracer::Current();
  if (tracer == nullptr) ThrowTraceError(loc, "shard_map called outside of a traced function");
  ThrowIfError(tracer->UseMesh(mesh_), loc);
  const Tree args = fn_.positional && call_args.is_leaf() ? Tree::list({call_args}) : call_args;
  auto [leaves, structure] = Flatten(args);
  std::vector<hlo::Shape> global_shapes;
  for (const Tensor& leaf : leaves) global_shapes.push_back(leaf.shape());
  std::vector<hlo::AxisSpec> in_specs =
      LeafSpecs(in_specs_, structure, global_shapes, mesh_, "in_specs", loc);

  const hlo::ManualMesh manual(mesh_.axes());
  std::vector<hlo::Shape> local_shapes;
  for (size_t i = 0; i < leaves.size(); ++i) {
    absl::StatusOr<hlo::Shape> local = hlo::LocalShape(global_shapes[i], in_specs[i], manual);
    if (!local.ok()) {
      ThrowTraceError(loc, absl::StrCat("shard_map argument leaf ", i, " (",
                                        global_shapes[i].ToString(), ") does not split by ",
                                        hlo::PrintSpecText(in_specs[i]), " over ",
                                        mesh_.ToString(), ": ", local.status().message()));
    }
    local_shapes.push_back(*std::move(local));
  }
  absl::StatusOr<ShapeTree> local_tree = Unflatten(structure, std::move(local_shapes));
  ThrowIfError(local_tree.status(), loc);

  absl::StatusOr<TracedFunction> body = [&] {
    BodyScope scope(mesh_);
    return TraceComputation(fn_.fn, *local_tree, "shard_map_body", /*tuple_root=*/false, loc);
  }();
  ThrowIfError(body.status(), loc);

  // Values of the enclosing function the body read are whole on every
  // device.
  std::vector<Tensor> operands = leaves;
  for (const Tensor& captured : body->captures) {
    operands.push_back(captured);
    in_specs.emplace_back();
  }
  std::vector<hlo::Shape> local_results = body->result_shapes;
  std::vector<hlo::AxisSpec> out_specs =
      LeafSpecs(out_specs_, body->results, local_results, mesh_, "out_specs", loc);

  std::vector<hlo::Attribute> attributes = {
      {"mesh", hlo::PrintMeshText(mesh_.axes())},
      {"in_specs", hlo::PrintSpecsText(in_specs)},
      {"out_specs", hlo::PrintSpecsText(out_specs)},
  };
  if (!options_.check_variance) attributes.push_back({"check_variance", false});
  attributes.push_back({"to_apply", body->computation});
  Tensor mapped = Emit(hlo::Opcode::kShardMap, operands, std::move(attributes), std::nullopt, loc);

  // Typing now (not when compiling) puts a wrong out_spec at this line and
  // makes the implicit casts explicit pbroadcasts before autodiff sees them.
  spmd::VarianceOptions typing;
  if (absl::Status typed = spmd::InferShardMapVariance(*Resolve(mapped, loc), typing);
      !typed.ok()) {
    ThrowTraceError(loc, std::string(typed.message()), typed.code());
  }

  std::vector<Tensor> results;
  if (mapped.shape().is_tuple()) {
    for (int64_t i = 0; i < mapped.shape().tuple_size(); ++i) {
      results.push_back(TupleElement(mapped, i, loc));
    }
  } else {
    results.push_back(mapped);
  }
  absl::StatusOr<Tree> out = Unflatten(body->results, std::move(results));
  ThrowIfError(out.status(), loc);
  return *out;
}

}  // namespace sharc::frontend
