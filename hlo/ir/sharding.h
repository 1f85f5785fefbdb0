// Sharding: how an array value is laid out over the devices of a mesh, in
// XLA's model. Replicated (every device holds everything), maximal (one device
// holds everything), manual (per-device values, inside shard_map regions),
// tiled (a tile-assignment array of device ids: one tile per data dimension
// index, optionally followed by subgroup dimensions whose devices share a
// tile, either replicated or manual), or a tuple of per-leaf shardings.
//
// Shardings are values: two shardings that denote the same layout compare
// equal however they were written (iota or explicit device lists, sorted
// replication groups, trivial subgroup dimensions dropped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "hlo/ir/shape.h"

namespace sharc::hlo {

// A device array of shape `dims`, row-major. If it was written (or built) as
// an iota, `iota_reshape`/`iota_perm` remember that form so that printing can
// reproduce it: devices = iota(prod).reshape(iota_reshape).transpose(iota_perm).
class TileAssignment {
 public:
  TileAssignment() = default;
  TileAssignment(std::vector<int64_t> dims, std::vector<int64_t> devices)
      : dims_(std::move(dims)), devices_(std::move(devices)) {}
  // iota(prod(reshape_dims)).reshape(reshape_dims).transpose(perm).reshape(dims)
  static TileAssignment Iota(std::vector<int64_t> dims,
                             std::vector<int64_t> reshape_dims,
                             std::vector<int64_t> perm);
  static TileAssignment Iota(std::vector<int64_t> dims);

  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<int64_t>& devices() const { return devices_; }
  int64_t num_dims() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t num_devices() const { return static_cast<int64_t>(devices_.size()); }
  // The device at a multi-index of `dims()`.
  int64_t at(absl::Span<const int64_t> index) const;

  bool has_iota_form() const { return !iota_reshape_.empty(); }
  const std::vector<int64_t>& iota_reshape() const { return iota_reshape_; }
  const std::vector<int64_t>& iota_perm() const { return iota_perm_; }
  // Drops the remembered iota form (after an edit that may not preserve it).
  void ForgetIotaForm() { iota_reshape_.clear(); iota_perm_.clear(); }
  // Reshapes the array in place (same devices in the same order).
  TileAssignment Reshaped(std::vector<int64_t> new_dims) const;
  // Transposes the array: new dim i = old dim perm[i].
  TileAssignment Transposed(absl::Span<const int64_t> perm) const;

  bool operator==(const TileAssignment& o) const {
    return dims_ == o.dims_ && devices_ == o.devices_;
  }

  // "[2,2]0,1,2,3" or "[4,2]<=[8]" or "[2,4]<=[4,2]T(1,0)".
  std::string ToString() const;

 private:
  std::vector<int64_t> dims_;
  std::vector<int64_t> devices_;
  std::vector<int64_t> iota_reshape_;
  std::vector<int64_t> iota_perm_;
};

// kUnreduced (XLA's `last_tile_dims={unreduced}`): the devices of a group
// each hold a partial value whose sum is the tile. sharc reads and prints it;
// propagation and the partitioner refuse it (HasUnreduced).
enum class SubgroupType { kManual, kUnreduced, kReplicated };

struct ShardGroup {
  bool shard_as = true;  // false: shard_like
  int64_t id = 0;
  bool operator==(const ShardGroup& o) const { return shard_as == o.shard_as && id == o.id; }
};

class Sharding {
 public:
  // kUnreduced (`{unreduced}`): every device holds a partial value of the
  // whole array; their sum is the value.
  enum class Kind { kReplicated, kMaximal, kManual, kUnknown, kTiled, kTuple, kUnreduced };

  Sharding() = default;  // replicated
  static Sharding Replicated() { return Sharding(); }
  static Sharding Maximal(int64_t device);
  static Sharding Manual();
  static Sharding Unknown();
  static Sharding Unreduced();
  // A tiled sharding. The last `subgroup_types.size()` dims of `tiles` are
  // subgroup dims. The result is normalized (see the file comment).
  static Sharding Tiled(TileAssignment tiles,
                        std::vector<SubgroupType> subgroup_types = {});
  // Tiled over the data dims, with the last dim of `tiles` a replication group.
  static Sharding PartialTile(TileAssignment tiles_with_replication_dim);
  static Sharding Tuple(std::vector<Sharding> leaves);

  Kind kind() const { return kind_; }
  bool IsReplicated() const { return kind_ == Kind::kReplicated; }
  bool IsMaximal() const { return kind_ == Kind::kMaximal; }
  bool IsManual() const { return kind_ == Kind::kManual; }
  bool IsUnknown() const { return kind_ == Kind::kUnknown; }
  bool IsTiled() const { return kind_ == Kind::kTiled; }
  bool IsTuple() const { return kind_ == Kind::kTuple; }
  // Replicated or maximal: one device (or all) holds the whole value.
  bool IsTileMaximal() const { return IsReplicated() || IsMaximal(); }

  int64_t maximal_device() const { return maximal_device_; }
  const TileAssignment& tile_assignment() const { return tiles_; }
  const std::vector<SubgroupType>& subgroup_types() const { return subgroup_types_; }
  const std::vector<Sharding>& tuple_elements() const { return tuple_elements_; }
  std::vector<Sharding>& mutable_tuple_elements() { return tuple_elements_; }

  // Tiled only. Number of data dims (tile-assignment dims minus subgroup dims).
  int64_t TiledDataRank() const;
  // Tile count along data dim `d` (1 for non-tiled shardings).
  int64_t TileCount(int64_t d) const;
  // Product of the data-dim tile counts.
  int64_t NumTiles() const;
  // True if the last tile dim is a replication subgroup.
  bool ReplicateOnLastTileDim() const;
  bool HasManualSubgroup() const;
  // `{unreduced}`, an unreduced subgroup, or a tuple holding either.
  bool HasUnreduced() const;
  // Size of the replication subgroup (1 if none).
  int64_t ReplicationFactor() const;

  // For a tiled sharding: the data-dim tile index held by `device`
  // (nullopt if the device is not in the assignment).
  std::optional<std::vector<int64_t>> TileIndexForDevice(int64_t device) const;
  // Per-device shape of `shape`: each tiled data dim becomes ceil(size/tiles).
  Shape ShardShape(const Shape& shape) const;
  // Offset of `device`'s tile along each dim of `shape` (zeros if untiled).
  std::vector<int64_t> TileOffset(const Shape& shape, int64_t device) const;
  // Every device id mentioned (tiled), sorted ascending.
  std::vector<int64_t> Devices() const;

  // Checks that the sharding fits `shape` (rank, tuple leaf count) and
  // `num_devices` (ids in range, no duplicates, all devices used). A
  // num_devices of 0 skips the device-count checks.
  absl::Status Validate(const Shape& shape, int64_t num_devices) const;

  // The leaf shardings of a (possibly non-tuple) sharding for `shape`: a
  // non-tuple sharding on a tuple shape applies to every leaf.
  std::vector<Sharding> LeavesFor(const Shape& shape) const;
  // The sub-sharding for tuple element `index` of `shape`.
  Sharding ElementSharding(const Shape& shape, int64_t index) const;

  const std::optional<ShardGroup>& shard_group() const { return shard_group_; }
  void set_shard_group(std::optional<ShardGroup> g) { shard_group_ = g; }
  // The dims the annotation leaves open (from backend_config="unspecified_dims=[...]").

  // XLA's text form, without the enclosing "sharding=".
  std::string ToString() const;

  // Semantic equality (shard groups are compared, metadata is not kept).
  bool operator==(const Sharding& o) const;
  bool operator!=(const Sharding& o) const { return !(*this == o); }

 private:
  void Normalize();

  Kind kind_ = Kind::kReplicated;
  int64_t maximal_device_ = 0;
  TileAssignment tiles_;
  std::vector<SubgroupType> subgroup_types_;
  std::vector<Sharding> tuple_elements_;
  std::optional<ShardGroup> shard_group_;
};

}  // namespace sharc::hlo
