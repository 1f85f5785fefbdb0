// with_sharding_constraint: pins the layout of an intermediate value, as in
// JAX. It emits XLA's annotation, a custom-call to "Sharding" carrying the
// sharding, which propagation treats as fixed and the partitioner honours.
#pragma once

#include <source_location>

#include "frontend/partition_spec.h"
#include "frontend/tensor.h"
#include "spmd/mesh.h"

namespace sharc::frontend {

// `x` laid out by `spec` over `mesh` (the trace adopts the mesh; jit runs on
// it when no mesh was given). Errors name the spec's unknown axis or a rank
// mismatch at the caller's line.
Tensor with_sharding_constraint(const Tensor& x, const spmd::Mesh& mesh,
                                const spmd::PartitionSpec& spec,
                                std::source_location loc = std::source_location::current());

}  // namespace sharc::frontend
