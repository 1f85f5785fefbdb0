#include "hlo/ir/sharding.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::hlo {

// ---------------------------------------------------------------- TileAssignment

namespace {

int64_t Product(absl::Span<const int64_t> v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// devices of iota(prod(reshape)).reshape(reshape).transpose(perm), row-major.
std::vector<int64_t> IotaDevices(absl::Span<const int64_t> reshape,
                                 absl::Span<const int64_t> perm) {
  int64_t n = Product(reshape);
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::vector<int64_t> strides = RowMajorStrides(reshape);
  std::vector<int64_t> tdims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) tdims[i] = reshape[perm[i]];
  std::vector<int64_t> idx(perm.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += idx[i] * strides[perm[i]];
    out[k] = src;
    NextIndex(tdims, idx);
  }
  return out;
}

bool IsIdentityPerm(absl::Span<const int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

namespace {

// The shortest iota form of the same device order: size-1 dims dropped and
// dims that stay adjacent through the transpose merged, so <=[6,2,1] prints
// as <=[12] and <=[2,2,2]T(2,0,1) as <=[4,2]T(1,0).
void CanonicalizeIota(std::vector<int64_t>& reshape, std::vector<int64_t>& perm) {
  std::vector<int64_t> keep;  // old dim -> kept index, -1 if dropped
  std::vector<int64_t> new_reshape;
  std::vector<int64_t> index(reshape.size(), -1);
  for (size_t i = 0; i < reshape.size(); ++i) {
    if (reshape[i] == 1) continue;
    index[i] = static_cast<int64_t>(new_reshape.size());
    new_reshape.push_back(reshape[i]);
  }
  std::vector<int64_t> new_perm;
  for (int64_t p : perm) {
    if (index[static_cast<size_t>(p)] >= 0) new_perm.push_back(index[static_cast<size_t>(p)]);
  }
  // Merge runs p, p+1 that are consecutive in the transposed order.
  bool merged = true;
  while (merged) {
    merged = false;
    for (size_t k = 0; k + 1 < new_perm.size(); ++k) {
      if (new_perm[k + 1] != new_perm[k] + 1) continue;
      int64_t d = new_perm[k];
      new_reshape[static_cast<size_t>(d)] *= new_reshape[static_cast<size_t>(d) + 1];
      new_reshape.erase(new_reshape.begin() + d + 1);
      new_perm.erase(new_perm.begin() + static_cast<int64_t>(k) + 1);
      for (int64_t& p : new_perm)
        if (p > d) --p;
      merged = true;
      break;
    }
  }
  if (new_reshape.empty()) {
    new_reshape = {1};
    new_perm = {0};
  }
  reshape = std::move(new_reshape);
  perm = std::move(new_perm);
}

}  // namespace

TileAssignment TileAssignment::Iota(std::vector<int64_t> dims,
                                    std::vector<int64_t> reshape_dims,
                                    std::vector<int64_t> perm) {
  TileAssignment t(std::move(dims), IotaDevices(reshape_dims, perm));
  CanonicalizeIota(reshape_dims, perm);
  t.iota_reshape_ = std::move(reshape_dims);
  t.iota_perm_ = std::move(perm);
  return t;
}

TileAssignment TileAssignment::Iota(std::vector<int64_t> dims) {
  int64_t n = Product(dims);
  return Iota(std::move(dims), {n}, {0});
}

int64_t TileAssignment::at(absl::Span<const int64_t> index) const {
  int64_t linear = 0;
  for (size_t i = 0; i < dims_.size(); ++i) linear = linear * dims_[i] + index[i];
  return devices_[static_cast<size_t>(linear)];
}

TileAssignment TileAssignment::Reshaped(std::vector<int64_t> new_dims) const {
  TileAssignment t(std::move(new_dims), devices_);
  t.iota_reshape_ = iota_reshape_;
  t.iota_perm_ = iota_perm_;
  return t;
}

TileAssignment TileAssignment::Transposed(absl::Span<const int64_t> perm) const {
  std::vector<int64_t> new_dims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) new_dims[i] = dims_[perm[i]];
  std::vector<int64_t> strides = RowMajorStrides(dims_);
  std::vector<int64_t> devices(devices_.size());
  std::vector<int64_t> idx(perm.size(), 0);
  for (size_t k = 0; k < devices_.size(); ++k) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += idx[i] * strides[perm[i]];
    devices[k] = devices_[static_cast<size_t>(src)];
    NextIndex(new_dims, idx);
  }
  TileAssignment t(std::move(new_dims), std::move(devices));
  // A plain iota transposed is still an iota: reshape to dims_, transpose by perm.
  if (has_iota_form() && iota_reshape_.size() == 1) {
    std::vector<int64_t> reshape = dims_;
    std::vector<int64_t> p(perm.begin(), perm.end());
    CanonicalizeIota(reshape, p);
    t.iota_reshape_ = std::move(reshape);
    t.iota_perm_ = std::move(p);
  }
  return t;
}

std::string TileAssignment::ToString() const {
  std::string out = absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
  if (has_iota_form()) {
    absl::StrAppend(&out, "<=[", absl::StrJoin(iota_reshape_, ","), "]");
    if (!IsIdentityPerm(iota_perm_)) {
      absl::StrAppend(&out, "T(", absl::StrJoin(iota_perm_, ","), ")");
    }
    return out;
  }
  absl::StrAppend(&out, absl::StrJoin(devices_, ","));
  return out;
}

// ---------------------------------------------------------------- Sharding

Sharding Sharding::Maximal(int64_t device) {
  Sharding s;
  s.kind_ = Kind::kMaximal;
  s.maximal_device_ = device;
  return s;
}

Sharding Sharding::Manual() {
  Sharding s;
  s.kind_ = Kind::kManual;
  return s;
}

Sharding Sharding::Unknown() {
  Sharding s;
  s.kind_ = Kind::kUnknown;
  return s;
}

Sharding Sharding::Unreduced() {
  Sharding s;
  s.kind_ = Kind::kUnreduced;
  return s;
}

Sharding Sharding::Tiled(TileAssignment tiles, std::vector<SubgroupType> subgroup_types) {
  Sharding s;
  s.kind_ = Kind::kTiled;
  s.tiles_ = std::move(tiles);
  s.subgroup_types_ = std::move(subgroup_types);
  s.Normalize();
  return s;
}

Sharding Sharding::PartialTile(TileAssignment tiles) {
  return Tiled(std::move(tiles), {SubgroupType::kReplicated});
}

Sharding Sharding::Tuple(std::vector<Sharding> leaves) {
  Sharding s;
  s.kind_ = Kind::kTuple;
  s.tuple_elements_ = std::move(leaves);
  return s;
}

void Sharding::Normalize() {
  if (kind_ != Kind::kTiled) return;
  const int64_t total = tiles_.num_dims();
  const int64_t nsub = static_cast<int64_t>(subgroup_types_.size());
  const int64_t data_rank = total - nsub;

  // 1. Drop subgroup dims of size 1 and order subgroups manual-first.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < data_rank; ++d) perm.push_back(d);
  std::vector<SubgroupType> kept;
  for (SubgroupType want :
       {SubgroupType::kManual, SubgroupType::kUnreduced, SubgroupType::kReplicated}) {
    for (int64_t i = 0; i < nsub; ++i) {
      if (subgroup_types_[i] != want) continue;
      perm.push_back(data_rank + i);
    }
  }
  bool needs_transpose = !IsIdentityPerm(perm);
  TileAssignment t = needs_transpose ? tiles_.Transposed(perm) : tiles_;
  std::vector<int64_t> new_dims(t.dims().begin(), t.dims().begin() + data_rank);
  int64_t manual = 1, unreduced = 1, replicated = 1;
  for (int64_t i = 0; i < nsub; ++i) {
    int64_t size = tiles_.dim(data_rank + i);
    (subgroup_types_[i] == SubgroupType::kManual      ? manual
     : subgroup_types_[i] == SubgroupType::kUnreduced ? unreduced
                                                      : replicated) *= size;
  }
  if (manual > 1) {
    new_dims.push_back(manual);
    kept.push_back(SubgroupType::kManual);
  }
  if (unreduced > 1) {
    new_dims.push_back(unreduced);
    kept.push_back(SubgroupType::kUnreduced);
  }
  if (replicated > 1) {
    new_dims.push_back(replicated);
    kept.push_back(SubgroupType::kReplicated);
  }
  if (new_dims != t.dims()) t = t.Reshaped(new_dims);
  tiles_ = std::move(t);
  subgroup_types_ = std::move(kept);

  // 2. Degenerate forms.
  int64_t data_tiles = Product(absl::Span<const int64_t>(tiles_.dims()).subspan(0, data_rank));
  if (data_tiles == 1 && subgroup_types_.size() == 1) {
    kind_ = subgroup_types_[0] == SubgroupType::kManual      ? Kind::kManual
            : subgroup_types_[0] == SubgroupType::kUnreduced ? Kind::kUnreduced
                                                             : Kind::kReplicated;
    tiles_ = TileAssignment();
    subgroup_types_.clear();
    return;
  }

  // 3. Sort each replication group ascending (groups are sets of devices).
  if (!subgroup_types_.empty() && subgroup_types_.back() == SubgroupType::kReplicated) {
    int64_t group = tiles_.dims().back();
    std::vector<int64_t> devices = tiles_.devices();
    bool changed = false;
    for (size_t start = 0; start < devices.size(); start += group) {
      auto b = devices.begin() + static_cast<int64_t>(start);
      if (!std::is_sorted(b, b + group)) {
        std::sort(b, b + group);
        changed = true;
      }
    }
    if (changed) tiles_ = TileAssignment(tiles_.dims(), std::move(devices));
  }
}

int64_t Sharding::TiledDataRank() const {
  if (kind_ != Kind::kTiled) return 0;
  return tiles_.num_dims() - static_cast<int64_t>(subgroup_types_.size());
}

int64_t Sharding::TileCount(int64_t d) const {
  if (kind_ != Kind::kTiled || d >= TiledDataRank()) return 1;
  return tiles_.dim(d);
}

int64_t Sharding::NumTiles() const {
  int64_t n = 1;
  for (int64_t d = 0; d < TiledDataRank(); ++d) n *= tiles_.dim(d);
  return n;
}

bool Sharding::ReplicateOnLastTileDim() const {
  return kind_ == Kind::kTiled && !subgroup_types_.empty() &&
         subgroup_types_.back() == SubgroupType::kReplicated;
}

bool Sharding::HasManualSubgroup() const {
  return kind_ == Kind::kTiled &&
         std::find(subgroup_types_.begin(), subgroup_types_.end(), SubgroupType::kManual) !=
             subgroup_types_.end();
}

bool Sharding::HasUnreduced() const {
  if (kind_ == Kind::kUnreduced) return true;
  if (kind_ == Kind::kTuple) {
    for (const Sharding& s : tuple_elements_) {
      if (s.HasUnreduced()) return true;
    }
    return false;
  }
  return kind_ == Kind::kTiled &&
         std::find(subgroup_types_.begin(), subgroup_types_.end(), SubgroupType::kUnreduced) !=
             subgroup_types_.end();
}

int64_t Sharding::ReplicationFactor() const {
  return ReplicateOnLastTileDim() ? tiles_.dims().back() : 1;
}

std::optional<std::vector<int64_t>> Sharding::TileIndexForDevice(int64_t device) const {
  if (kind_ != Kind::kTiled) return std::vector<int64_t>{};
  const std::vector<int64_t>& devs = tiles_.devices();
  auto it = std::find(devs.begin(), devs.end(), device);
  if (it == devs.end()) return std::nullopt;
  int64_t linear = it - devs.begin();
  std::vector<int64_t> idx(static_cast<size_t>(tiles_.num_dims()));
  for (int64_t d = tiles_.num_dims() - 1; d >= 0; --d) {
    idx[d] = linear % tiles_.dim(d);
    linear /= tiles_.dim(d);
  }
  idx.resize(static_cast<size_t>(TiledDataRank()));
  return idx;
}

Shape Sharding::ShardShape(const Shape& shape) const {
  if (shape.is_tuple()) {
    std::vector<Sharding> leaves = LeavesFor(shape);
    std::vector<Shape> out;
    int64_t leaf = 0;
    // Walk elements, consuming one leaf sharding per array leaf.
    std::function<Shape(const Shape&)> walk = [&](const Shape& s) -> Shape {
      if (!s.is_tuple()) return leaves[static_cast<size_t>(leaf++)].ShardShape(s);
      std::vector<Shape> elems;
      for (const Shape& e : s.tuple_shapes()) elems.push_back(walk(e));
      return Shape::Tuple(std::move(elems));
    };
    return walk(shape);
  }
  if (kind_ != Kind::kTiled) return shape;
  Shape out = shape;
  for (int64_t d = 0; d < shape.rank() && d < TiledDataRank(); ++d) {
    int64_t tiles = tiles_.dim(d);
    out.mutable_dims()[d] = (shape.dim(d) + tiles - 1) / tiles;
  }
  return out;
}

std::vector<int64_t> Sharding::TileOffset(const Shape& shape, int64_t device) const {
  std::vector<int64_t> offset(static_cast<size_t>(shape.rank()), 0);
  if (kind_ != Kind::kTiled) return offset;
  std::optional<std::vector<int64_t>> idx = TileIndexForDevice(device);
  if (!idx) return offset;
  Shape shard = ShardShape(shape);
  for (int64_t d = 0; d < shape.rank() && d < TiledDataRank(); ++d) {
    offset[d] = (*idx)[d] * shard.dim(d);
  }
  return offset;
}

std::vector<int64_t> Sharding::Devices() const {
  std::vector<int64_t> d = tiles_.devices();
  std::sort(d.begin(), d.end());
  return d;
}

absl::Status Sharding::Validate(const Shape& shape, int64_t num_devices) const {
  if (kind_ == Kind::kTuple) {
    if (!shape.is_tuple()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuple sharding ", ToString(), " given for array shape ", shape.ToString()));
    }
    if (static_cast<int64_t>(tuple_elements_.size()) != shape.leaf_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tuple sharding has ", tuple_elements_.size(), " elements but shape ",
          shape.ToString(), " has ", shape.leaf_count(), " leaves"));
    }
    std::vector<Shape> leaves;
    std::function<void(const Shape&)> collect = [&](const Shape& s) {
      if (!s.is_tuple()) {
        leaves.push_back(s);
        return;
      }
      for (const Shape& e : s.tuple_shapes()) collect(e);
    };
    collect(shape);
    for (size_t i = 0; i < leaves.size(); ++i) {
      absl::Status st = tuple_elements_[i].Validate(leaves[i], num_devices);
      if (!st.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("tuple sharding element ", i, ": ", st.message()));
      }
    }
    return absl::OkStatus();
  }
  if (shape.is_tuple()) {
    for (const Shape& e : shape.tuple_shapes()) {
      absl::Status st = Validate(e, num_devices);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (kind_ == Kind::kMaximal) {
    if (maximal_device_ < 0 || (num_devices > 0 && maximal_device_ >= num_devices)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding ", ToString(), " names device ", maximal_device_,
          " but there are only ", num_devices, " devices"));
    }
    return absl::OkStatus();
  }
  if (kind_ != Kind::kTiled) return absl::OkStatus();
  if (TiledDataRank() != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", ToString(), " has ", TiledDataRank(),
        " tiled dimensions but the shape ", shape.ToString(), " has rank ", shape.rank()));
  }
  const std::vector<int64_t>& devs = tiles_.devices();
  if (devs.size() == 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", ToString(),
        " has a tile assignment of one device; use {replicated} or {maximal device=N}"));
  }
  absl::flat_hash_set<int64_t> seen;
  for (int64_t d : devs) {
    if (d < 0 || (num_devices > 0 && d >= num_devices)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding ", ToString(), " names device ", d, ", outside [0, ", num_devices, ")"));
    }
    if (!seen.insert(d).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sharding ", ToString(), " lists device ", d, " twice"));
    }
  }
  if (num_devices > 0 && static_cast<int64_t>(devs.size()) != num_devices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sharding ", ToString(), " uses ", devs.size(), " devices but the module has ",
        num_devices));
  }
  return absl::OkStatus();
}

std::vector<Sharding> Sharding::LeavesFor(const Shape& shape) const {
  if (kind_ == Kind::kTuple) return tuple_elements_;
  return std::vector<Sharding>(static_cast<size_t>(shape.leaf_count()), *this);
}

Sharding Sharding::ElementSharding(const Shape& shape, int64_t index) const {
  if (kind_ != Kind::kTuple) return *this;
  int64_t start = 0;
  for (int64_t i = 0; i < index; ++i) start += shape.tuple_shape(i).leaf_count();
  const Shape& elem = shape.tuple_shape(index);
  if (!elem.is_tuple()) return tuple_elements_[static_cast<size_t>(start)];
  std::vector<Sharding> sub(tuple_elements_.begin() + start,
                            tuple_elements_.begin() + start + elem.leaf_count());
  return Tuple(std::move(sub));
}

std::string Sharding::ToString() const {
  std::string body;
  switch (kind_) {
    case Kind::kReplicated:
      body = "replicated";
      break;
    case Kind::kMaximal:
      body = absl::StrCat("maximal device=", maximal_device_);
      break;
    case Kind::kManual:
      body = "manual";
      break;
    case Kind::kUnknown:
      body = "unknown";
      break;
    case Kind::kUnreduced:
      body = "unreduced";
      break;
    case Kind::kTiled: {
      body = absl::StrCat("devices=", tiles_.ToString());
      if (subgroup_types_.size() == 1 && subgroup_types_[0] == SubgroupType::kReplicated) {
        body += " last_tile_dim_replicate";
      } else if (!subgroup_types_.empty()) {
        std::vector<std::string> names;
        for (SubgroupType t : subgroup_types_)
          names.push_back(t == SubgroupType::kManual      ? "manual"
                          : t == SubgroupType::kUnreduced ? "unreduced"
                                                          : "replicated");
        absl::StrAppend(&body, " last_tile_dims={", absl::StrJoin(names, ", "), "}");
      }
      break;
    }
    case Kind::kTuple: {
      std::vector<std::string> parts;
      for (const Sharding& s : tuple_elements_) parts.push_back(s.ToString());
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
  }
  if (shard_group_) {
    absl::StrAppend(&body, shard_group_->shard_as ? " shard_as " : " shard_like",
                    shard_group_->shard_as ? "" : " ", shard_group_->id);
  }
  return absl::StrCat("{", body, "}");
}

bool Sharding::operator==(const Sharding& o) const {
  if (kind_ != o.kind_ || shard_group_ != o.shard_group_) return false;
  switch (kind_) {
    case Kind::kMaximal:
      return maximal_device_ == o.maximal_device_;
    case Kind::kTiled:
      return tiles_ == o.tiles_ && subgroup_types_ == o.subgroup_types_;
    case Kind::kTuple:
      return tuple_elements_ == o.tuple_elements_;
    default:
      return true;
  }
}

}  // namespace sharc::hlo
