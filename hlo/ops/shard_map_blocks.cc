#include "hlo/ops/shard_map_blocks.h"

#include <cstring>

#include "hlo/ops/op_util.h"

namespace sharc::hlo {

Literal ExtractBlock(const Literal& from, const Shape& block_shape,
                     const std::vector<int64_t>& offset) {
  Literal block(block_shape);
  std::vector<int64_t> src;
  int64_t dst = 0;
  ForEachIndex(block_shape.dims(), [&](const std::vector<int64_t>& index) {
    src = index;
    for (size_t d = 0; d < src.size(); ++d) src[d] += offset[d];
    CopyElement(from, LinearIndex(from.shape().dims(), src), block, dst++);
  });
  return block;
}

void InsertBlock(const Literal& block, Literal& into, const std::vector<int64_t>& offset) {
  std::vector<int64_t> dst;
  int64_t src = 0;
  ForEachIndex(block.shape().dims(), [&](const std::vector<int64_t>& index) {
    dst = index;
    for (size_t d = 0; d < dst.size(); ++d) dst[d] += offset[d];
    CopyElement(block, src++, into, LinearIndex(into.shape().dims(), dst));
  });
}

Literal Reshaped(const Literal& literal, const Shape& shape) {
  Literal out(shape);
  if (literal.size_bytes() > 0) {
    std::memcpy(out.untyped_data(), literal.untyped_data(),
                static_cast<size_t>(literal.size_bytes()));
  }
  return out;
}

std::vector<int64_t> BlockOffset(const ManualMesh& mesh, int64_t device, const AxisSpec& spec,
                                 const Shape& local) {
  std::vector<int64_t> offset(static_cast<size_t>(local.rank()), 0);
  for (size_t d = 0; d < spec.size() && d < offset.size(); ++d) {
    offset[d] = mesh.GroupPosition(device, spec[d]) * local.dim(static_cast<int64_t>(d));
  }
  return offset;
}

}  // namespace sharc::hlo
