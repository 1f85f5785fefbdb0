// Moving blocks of arrays between a global value and a device's local value:
// the data movement shared by shard_map's reference evaluator and the
// named-axis collectives (gather, scatter, all-to-all are block copies).
#pragma once

#include <cstdint>
#include <vector>

#include "hlo/ir/literal.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::hlo {

// The block of `block_shape` starting at `offset` (one entry per dim).
Literal ExtractBlock(const Literal& from, const Shape& block_shape,
                     const std::vector<int64_t>& offset);
// Writes `block` into `into` starting at `offset`.
void InsertBlock(const Literal& block, Literal& into, const std::vector<int64_t>& offset);
// The same bytes viewed with another shape of as many elements (row-major
// makes inserting or removing a size-1 dimension free).
Literal Reshaped(const Literal& literal, const Shape& shape);
// Where `device`'s local block of shape `local` sits in the global value
// laid out by `spec` on `mesh`.
std::vector<int64_t> BlockOffset(const ManualMesh& mesh, int64_t device, const AxisSpec& spec,
                                 const Shape& local);

}  // namespace sharc::hlo
