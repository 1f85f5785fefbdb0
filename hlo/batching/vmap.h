// vmap as an IR transform: builds a computation that evaluates `f` for each
// of `batch_size` slices along a new leading axis. Used by the MapReduce
// lowering (map over groups) and the frontend's vmap. The per-op work is done
// by the batching rules registered in batching_rule.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/module.h"
#include "hlo/ir/sharding.h"

namespace sharc::hlo {

struct VmapOptions {
  // Shardings found inside f (instruction shardings, and custom-call target
  // "Sharding" constraints) get a leading dimension; by default it is
  // unsharded (replicated along the new dim). The MapReduce lowering passes a
  // callback that shards the new dimension over a mesh axis (like JAX's
  // spmd_axis_name). Called once per batched array leaf.
  std::function<absl::StatusOr<Sharding>(const Sharding& inner, const Shape& batched_shape)>
      batch_sharding;  // optional
};

// Adds to `module` a new computation named `name` (made unique) computing `f`
// for each of `batch_size` slices along a new leading axis 0: parameter i has
// shape [batch_size, ...original] if batched_params[i], else its original
// shape (shared by all slices). Every result leaf is batched at dim 0 (an
// unbatched value is broadcast); a tuple root gives a tuple of batched
// leaves. Called computations (call, while, conditional bodies) are batched
// recursively where needed (reducers of reduce stay scalar). `f` and its
// callees must belong to `module`.
//
// Ops that cannot be batched fail with Unimplemented, naming the instruction
// and the reason; the module is then left without the new computation.
absl::StatusOr<Computation*> Vmap(Module& module, const Computation& f,
                                  absl::Span<const bool> batched_params, int64_t batch_size,
                                  std::string_view name, const VmapOptions& options = {});

}  // namespace sharc::hlo
