// Tracing a whole program: a function of a tree of Tensors becomes the entry
// computation of a fresh hlo::Module, one parameter per input leaf and a
// tuple root of the output leaves, with the input/output shardings and the
// mesh recorded the way the partitioner reads them. jit caches and runs these
// modules; tests and tools print them (like jax.make_jaxpr).
#pragma once

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/partition_spec.h"
#include "frontend/tracer.h"
#include "frontend/trees.h"
#include "hlo/ir/module.h"
#include "spmd/mapreduce_lowering.h"
#include "spmd/mesh.h"

namespace sharc::frontend {

struct TraceModuleOptions {
  // The module is named "jit_<name>".
  std::string name = "f";
  // The mesh shardings refer to. Without one, a mesh used by
  // with_sharding_constraint inside the function is adopted.
  std::optional<spmd::Mesh> mesh;
  // PartitionSpecs for the inputs / outputs: a tree that is a prefix of the
  // input / output structure (one spec may stand for a whole subtree).
  // Leaves without a spec are left to sharding propagation.
  std::optional<SpecTree> in_shardings;
  std::optional<SpecTree> out_shardings;
  TraceOptions trace;
  // How MapReduce blocks (frontend/mapreduce.h) are lowered before running:
  // DrJAX's internal constraints (annotated), none (ns) or a loop over groups.
  spmd::MapReduceMode mapreduce_mode = spmd::MapReduceMode::kAnnotated;
};

struct TracedModule {
  std::unique_ptr<hlo::Module> module;
  TreeStructure inputs;
  TreeStructure outputs;
  std::vector<hlo::Shape> output_shapes;
  // The mesh the module is laid out on (options' or the constraints'), if any.
  std::optional<spmd::Mesh> mesh;
};

// Traces `fn` on inputs of `args`' shapes. The module is verified. Errors
// start with the file:line of the failing call in `fn`, or with `loc` for
// problems of the whole function (shardings that do not fit the inputs).
absl::StatusOr<TracedModule> TraceModule(const TreeFunction& fn, const ShapeTree& args,
                                         const TraceModuleOptions& options = {},
                                         std::source_location loc = std::source_location::current());

}  // namespace sharc::frontend
