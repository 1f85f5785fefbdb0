#include "spmd/partition/device_values.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "spmd/unreduced.h"

namespace sharc::spmd {

using hlo::Literal;
using hlo::Shape;
using hlo::Sharding;

namespace {

// Copies the box [offset, offset + extent) between a global array and a
// tile, clipping to the array.
void CopyBox(const Literal& from, Literal& to, const std::vector<int64_t>& offset, bool to_tile) {
  const Shape& global = to_tile ? from.shape() : to.shape();
  const Shape& tile = to_tile ? to.shape() : from.shape();
  const int64_t width = hlo::ByteWidth(global.type());
  std::vector<int64_t> gstride = hlo::RowMajorStrides(global.dims());
  std::vector<int64_t> tstride = hlo::RowMajorStrides(tile.dims());
  std::vector<int64_t> index(static_cast<size_t>(tile.rank()), 0);
  if (tile.num_elements() == 0) return;
  do {
    int64_t g = 0, t = 0;
    bool inside = true;
    for (int64_t d = 0; d < tile.rank(); ++d) {
      int64_t pos = offset[d] + index[d];
      if (pos >= global.dim(d)) inside = false;
      g += pos * gstride[d];
      t += index[d] * tstride[d];
    }
    if (!inside) continue;
    if (to_tile) {
      std::memcpy(to.untyped_data() + t * width, from.untyped_data() + g * width, width);
    } else {
      std::memcpy(to.untyped_data() + g * width, from.untyped_data() + t * width, width);
    }
  } while (hlo::NextIndex(tile.dims(), index));
}

// Adds each device's partial tile into the whole value (spmd/unreduced.h):
// the devices of one copy's unreduced groups, each tile at its offset.
absl::StatusOr<Literal> SumPartials(const std::vector<Literal>& parts, const Sharding& sharding,
                                    const Shape& shape) {
  if (hlo::IsComplex(shape.type())) {
    return absl::UnimplementedError(absl::StrCat(
        "unsupported: assembling unreduced ", shape.ToString(), " values of a complex type"));
  }
  const Sharding whole_form = ReducedForm(sharding);
  Literal whole(shape);
  std::vector<int64_t> wstride = hlo::RowMajorStrides(shape.dims());
  for (size_t d = 0; d < parts.size(); ++d) {
    const int64_t device = static_cast<int64_t>(d);
    if (!CountsInSum(sharding, device)) continue;
    const Literal& part = parts[d];
    if (part.shape() != whole_form.ShardShape(shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", d, " returned ", part.shape().ToString(), " but the sharding ",
          sharding.ToString(), " gives ", whole_form.ShardShape(shape).ToString()));
    }
    const std::vector<int64_t> offset = whole_form.TileOffset(shape, device);
    std::vector<int64_t> index(static_cast<size_t>(shape.rank()), 0);
    if (part.shape().num_elements() == 0) continue;
    int64_t t = 0;
    do {
      int64_t g = 0;
      bool inside = true;
      for (int64_t k = 0; k < shape.rank(); ++k) {
        const int64_t pos = offset[k] + index[k];
        inside &= pos < shape.dim(k);
        g += pos * wstride[k];
      }
      if (inside) whole.SetFromDouble(g, whole.GetAsDouble(g) + part.GetAsDouble(t));
      ++t;
    } while (hlo::NextIndex(part.shape().dims(), index));
  }
  return whole;
}

}  // namespace

absl::StatusOr<Literal> ShardLiteral(const Literal& value, const Sharding& sharding, int64_t device) {
  const Shape& shape = value.shape();
  if (shape.is_tuple()) {
    std::vector<Literal> parts;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      ASSIGN_OR_RETURN(Literal p, ShardLiteral(value.element(i), sharding.ElementSharding(shape, i), device));
      parts.push_back(std::move(p));
    }
    return Literal::Tuple(std::move(parts));
  }
  if (sharding.HasUnreduced()) {
    // Partial values: the whole tile on one device of each group, zeros on
    // the others, so that their sum is the value.
    ASSIGN_OR_RETURN(Literal tile, ShardLiteral(value, ReducedForm(sharding), device));
    if (HoldsWholeValue(sharding, device)) return tile;
    return Literal(tile.shape());
  }
  if (!sharding.IsTiled()) return value;
  if (!sharding.TileIndexForDevice(device)) {
    return absl::InvalidArgumentError(
        absl::StrCat("device ", device, " is not in sharding ", sharding.ToString()));
  }
  Literal tile(sharding.ShardShape(shape));
  CopyBox(value, tile, sharding.TileOffset(shape, device), /*to_tile=*/true);
  return tile;
}

absl::StatusOr<Literal> AssembleLiteral(const std::vector<Literal>& parts, const Sharding& sharding,
                                        const Shape& shape) {
  if (parts.empty()) return absl::InvalidArgumentError("no device values to assemble");
  if (shape.is_tuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      std::vector<Literal> sub;
      for (const Literal& p : parts) sub.push_back(p.element(i));
      ASSIGN_OR_RETURN(Literal e, AssembleLiteral(sub, sharding.ElementSharding(shape, i),
                                                  shape.tuple_shape(i)));
      elements.push_back(std::move(e));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (sharding.HasUnreduced()) return SumPartials(parts, sharding, shape);
  if (!sharding.IsTiled()) {
    const int64_t device = sharding.IsMaximal() ? sharding.maximal_device() : 0;
    if (device >= static_cast<int64_t>(parts.size())) {
      return absl::InvalidArgumentError(absl::StrCat("no value from device ", device));
    }
    return parts[static_cast<size_t>(device)];
  }
  Literal whole(shape);
  for (size_t d = 0; d < parts.size(); ++d) {
    if (!sharding.TileIndexForDevice(static_cast<int64_t>(d))) continue;
    if (parts[d].shape() != sharding.ShardShape(shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", d, " returned ", parts[d].shape().ToString(), " but the sharding ",
          sharding.ToString(), " gives ", sharding.ShardShape(shape).ToString()));
    }
    CopyBox(parts[d], whole, sharding.TileOffset(shape, static_cast<int64_t>(d)), /*to_tile=*/false);
  }
  return whole;
}

}  // namespace sharc::spmd
