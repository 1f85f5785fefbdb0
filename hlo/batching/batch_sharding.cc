#include "hlo/batching/batch_sharding.h"

#include <vector>

#include "hlo/base/status_macros.h"

namespace sharc::hlo {
namespace {

// The leading dim gets one tile: every device holds all slices of its tile.
Sharding ReplicatedAlongBatch(const Sharding& inner) {
  if (!inner.IsTiled()) return inner;
  std::vector<int64_t> dims = {1};
  const std::vector<int64_t>& tile_dims = inner.tile_assignment().dims();
  dims.insert(dims.end(), tile_dims.begin(), tile_dims.end());
  Sharding out =
      Sharding::Tiled(inner.tile_assignment().Reshaped(std::move(dims)), inner.subgroup_types());
  out.set_shard_group(inner.shard_group());
  return out;
}

absl::StatusOr<Sharding> BatchLeaf(const Sharding& inner, const Shape& shape, bool batched,
                                   int64_t batch_size, const VmapOptions& options) {
  if (!batched) return inner;
  if (options.batch_sharding) {
    return options.batch_sharding(inner, BatchTree::Leaf(true).Apply(shape, batch_size));
  }
  return ReplicatedAlongBatch(inner);
}

void FlattenLeaves(const Shape& shape, const BatchTree& batched, std::vector<Shape>& shapes,
                   std::vector<bool>& flags) {
  if (!shape.is_tuple()) {
    shapes.push_back(shape);
    flags.push_back(batched.batched());
    return;
  }
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    FlattenLeaves(shape.tuple_shape(i), batched.element(i), shapes, flags);
  }
}

}  // namespace

absl::StatusOr<Sharding> BatchSharding(const Sharding& inner, const Shape& shape,
                                       const BatchTree& batched, int64_t batch_size,
                                       const VmapOptions& options) {
  if (!shape.is_tuple()) return BatchLeaf(inner, shape, batched.batched(), batch_size, options);
  // Tuple shardings hold one sharding per leaf, flattened.
  std::vector<Shape> shapes;
  std::vector<bool> flags;
  FlattenLeaves(shape, batched, shapes, flags);
  std::vector<Sharding> leaves = inner.LeavesFor(shape);
  RET_CHECK(leaves.size() == shapes.size());
  std::vector<Sharding> out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    ASSIGN_OR_RETURN(Sharding s, BatchLeaf(leaves[i], shapes[i], flags[i], batch_size, options));
    out.push_back(std::move(s));
  }
  return Sharding::Tuple(std::move(out));
}

}  // namespace sharc::hlo
