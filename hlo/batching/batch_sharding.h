// Shardings of batched values: an instruction's sharding inside f describes
// one slice; the batched value has one more (leading) dimension, laid out by
// VmapOptions::batch_sharding or, by default, left unsharded.
#pragma once

#include "absl/status/statusor.h"
#include "hlo/batching/batch_tree.h"
#include "hlo/batching/vmap.h"
#include "hlo/ir/sharding.h"

namespace sharc::hlo {

// The sharding of a value of per-slice shape `shape` batched as `batched`,
// given its per-slice sharding `inner`.
absl::StatusOr<Sharding> BatchSharding(const Sharding& inner, const Shape& shape,
                                       const BatchTree& batched, int64_t batch_size,
                                       const VmapOptions& options);

}  // namespace sharc::hlo
