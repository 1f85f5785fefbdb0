// Differential test of the SPMD partitioner on random programs: each case is
// a random HLO module (elementwise ops, shape ops, reductions, dots, gathers
// and scatters, control flow, ...) with random shardings on its parameters and on some
// intermediate values, for a random mesh of 1, 2, 4 or 8 devices. The case
// is propagated, partitioned, verified, and run on simulated devices; the
// assembled result must equal the global interpreter's.
//
// SHARC_RANDOM_PARTITION_CASES=N runs N cases (default 2000);
// SHARC_RANDOM_PARTITION_CASE=K runs case K only (to reproduce a failure);
// SHARC_RANDOM_PARTITION_PRINT=M prints at most M failing cases in full
// (default 10); SHARC_RANDOM_PARTITION_MAX_OPS=K makes programs of up to K
// ops (default 9). Every failing case is written to
// /tmp/sharc_partition_failures/case_K.hlo.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/insert_reshards.h"
#include "spmd/partition/partitioner.h"
#include "spmd/partition/reshard_to_collectives.h"
#include "spmd/propagation.h"
#include "tests/partition/partition_test_util.h"

namespace sharc::spmd {
namespace {

namespace fs = std::filesystem;

// Op families the generator may use. All are on; switching one off is how a
// known bug is fenced while it is being fixed (name it in the commit).
constexpr bool kGenerateUnary = true;
constexpr bool kGenerateBinary = true;
constexpr bool kGenerateCompareSelect = true;
constexpr bool kGenerateBroadcast = true;
constexpr bool kGenerateReshape = true;
constexpr bool kGenerateTranspose = true;
constexpr bool kGenerateSlice = true;
constexpr bool kGeneratePad = true;
constexpr bool kGenerateConcatenate = true;
constexpr bool kGenerateReverse = true;
// reduce-window (windows, strides, edge padding; init values that are not
// the reducer's identity): along split dims these take halo exchanges.
constexpr bool kGenerateReduceWindow = true;
// convolution with dims in any order, strides, padding (negative too) and
// base and kernel dilation: split spatial dims of its result take halo
// exchanges.
constexpr bool kGenerateConvolution = true;
// ragged-dot (rows in groups of random sizes, each group with its own rhs):
// the ragged dim stays whole, the contraction and rhs free dim split.
constexpr bool kGenerateRaggedDot = true;
constexpr bool kGenerateDynamicSlice = true;
constexpr bool kGenerateDynamicUpdateSlice = true;
constexpr bool kGenerateGather = true;
constexpr bool kGenerateScatter = true;
// Finer switches for patterns within a family.
// Slices that keep some dim whole ([0:d:1]).
constexpr bool kGenerateSliceKeepingWholeDims = true;
// One called computation shared by several call / conditional sites.
constexpr bool kGenerateSharedCallees = true;
// Negative edge padding (pad lo/hi of -1), e.g. padding=1_-1.
constexpr bool kGenerateNegativePadding = true;
constexpr bool kGenerateReduce = true;
// argmax: a variadic reduce of values and iota indices.
constexpr bool kGenerateArgmax = true;
constexpr bool kGenerateTopK = true;
constexpr bool kGenerateDot = true;
constexpr bool kGenerateIota = true;
constexpr bool kGenerateConstant = true;
constexpr bool kGenerateConvert = true;
constexpr bool kGenerateTuple = true;
constexpr bool kGenerateWhile = true;
constexpr bool kGenerateCall = true;
constexpr bool kGenerateConditional = true;
// Manual regions between custom-call boundaries (Sharding,
// SPMDFullToShardShape, SPMDShardToFullShape), fully manual or partially
// manual (last_tile_dims={manual, replicated}).
constexpr bool kGenerateManualRegion = true;
constexpr bool kGenerateComplexDetour = true;

constexpr uint32_t kBaseSeed = 20260401;
// How often an intermediate instruction gets its own sharding annotation.
constexpr double kIntermediateShardingP = 0.3;

int EnvInt(const char* name, int fallback) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? std::atoi(env) : fallback;
}

struct Value {
  std::string name;
  std::string type;  // f32, s32
  std::vector<int64_t> dims;
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
};

std::string ShapeText(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}
std::string ShapeText(const Value& v) { return ShapeText(v.type, v.dims); }

struct Mesh {
  int64_t devices = 1;
  std::vector<int64_t> axes;  // the layout, e.g. {2,4}
  std::string ToString() const { return absl::StrJoin(axes, "x"); }
};

class ProgramGenerator {
 public:
  ProgramGenerator(uint32_t seed, const Mesh& mesh) : rng_(seed), mesh_(mesh) {
    // A per-case device numbering of the mesh (identity or shuffled).
    mesh_devices_.resize(static_cast<size_t>(mesh.devices));
    std::iota(mesh_devices_.begin(), mesh_devices_.end(), 0);
    if (Chance(0.3)) std::shuffle(mesh_devices_.begin(), mesh_devices_.end(), rng_);
  }

  std::string Generate() {
    const int ops = Uniform(2, EnvInt("SHARC_RANDOM_PARTITION_MAX_OPS", 9));
    for (int i = 0; i < ops; ++i) Step();
    if (pool_.empty()) Step();
    root_ = ChooseRoot();
    return Text(/*reference=*/false);
  }

  // The program with every manual region replaced by its ops on global
  // values (what the region computes), for the global interpreter, which
  // has no devices to run a region on; "" when there is no manual region.
  std::string Reference() const { return reference_overrides_.empty() ? "" : Text(/*reference=*/true); }

 private:
  std::string Text(bool reference) const {
    std::string text = absl::StrCat("HloModule random_case, num_partitions=", mesh_.devices, "\n\n");
    for (const char* t : {"f32", "s32", "c64"}) {
      for (const char* op : {"add", std::string(t) == "c64" ? "multiply" : "maximum"}) {
        absl::StrAppend(&text, "%", op, "_", t, " (a: ", t, "[], b: ", t, "[]) -> ", t, "[] {\n",
                        "  %a = ", t, "[] parameter(0)\n  %b = ", t, "[] parameter(1)\n",
                        "  ROOT %r = ", t, "[] ", op, "(%a, %b)\n}\n\n");
      }
    }
    for (const std::string& c : computations_) absl::StrAppend(&text, c, "\n");
    absl::StrAppend(&text, "ENTRY %main {\n");
    for (const std::string& l : params_) absl::StrAppend(&text, l, "\n");
    for (size_t i = 0; i < lines_.size(); ++i) {
      auto it = reference_overrides_.find(i);
      absl::StrAppend(&text, reference && it != reference_overrides_.end() ? it->second : lines_[i], "\n");
    }
    absl::StrAppend(&text, root_, "\n}\n");
    return text;
  }

  // The root line, chosen once (Text prints it twice).
  std::string ChooseRoot() {
    // Root: the last value, or a tuple of a few values.
    std::string root;
    std::vector<Value> outs;
    outs.push_back(pool_.back());
    if (Chance(0.35)) {
      const int extra = Uniform(1, 2);
      for (int i = 0; i < extra; ++i) outs.push_back(Pick());
    }
    if (outs.size() == 1) {
      const Value& v = outs[0];
      root = absl::StrCat("  ROOT %result = ", ShapeText(v), " copy(%", v.name, ")",
                          MaybeSharding(v.rank(), 0.5));
    } else {
      std::vector<std::string> shapes, names, shardings;
      bool shard = Chance(0.4);
      for (const Value& v : outs) {
        shapes.push_back(ShapeText(v));
        names.push_back("%" + v.name);
        shardings.push_back(absl::StrCat("{", RandomSharding(v.rank()), "}"));
      }
      root = absl::StrCat("  ROOT %result = (", absl::StrJoin(shapes, ", "), ") tuple(",
                          absl::StrJoin(names, ", "), ")",
                          shard ? absl::StrCat(", sharding={", absl::StrJoin(shardings, ", "), "}")
                                : "");
    }
    return root;
  }

  // ---- randomness -------------------------------------------------------
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t Dim() { return Chance(0.15) ? 1 : Uniform(2, 8); }
  std::vector<int64_t> RandomDims(int rank) {
    std::vector<int64_t> d;
    for (int i = 0; i < rank; ++i) d.push_back(Dim());
    return d;
  }
  std::string RandomType() { return Chance(0.8) ? "f32" : "s32"; }

  std::string Fresh(const std::string& base) { return absl::StrCat(base, next_++); }

  // Shard groups by element type and shape.
  std::map<std::string, int64_t> shard_groups_;

  // ---- shardings --------------------------------------------------------
  // A sharding for a rank-`rank` value: mesh axes are assigned to at most
  // two tensor dims or to replication (last_tile_dim_replicate), in the
  // mesh's device order, sometimes with a fully random device order.
  std::string RandomSharding(int64_t rank) {
    // (One device: the verifier asks for {replicated} over a one-device
    // tile assignment.)
    if (rank == 0 || mesh_.devices == 1 || Chance(0.15)) {
      // Partial values on every device (spmd/unreduced.h), one device's
      // value, or "propagation decides", now and then.
      if (mesh_.devices > 1 && Chance(0.1)) return "unreduced";
      if (Chance(0.08)) return absl::StrCat("maximal device=", Uniform(0, mesh_.devices - 1));
      if (Chance(0.05)) return "unknown";
      return "replicated";
    }
    // Axes: the mesh's, or a finer split of a 1-D mesh.
    std::vector<int64_t> axes = mesh_.axes;
    if (axes.size() == 1 && axes[0] == 8 && Chance(0.4)) {
      axes = Chance(0.5) ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{4, 2};
    } else if (axes.size() == 1 && axes[0] == 4 && Chance(0.3)) {
      axes = {2, 2};
    }
    const int64_t naxes = static_cast<int64_t>(axes.size());
    // Devices laid on the axes, row-major.
    std::vector<int64_t> devices = mesh_devices_;
    if (Chance(0.15)) std::shuffle(devices.begin(), devices.end(), rng_);
    std::vector<int64_t> tensor_dims(static_cast<size_t>(rank));
    std::iota(tensor_dims.begin(), tensor_dims.end(), 0);
    std::shuffle(tensor_dims.begin(), tensor_dims.end(), rng_);
    const int used = rank >= 2 && Chance(0.4) ? 2 : 1;
    tensor_dims.resize(static_cast<size_t>(used));
    // owner[a] = index into tensor_dims, or -1 for replication.
    std::vector<int64_t> owner(static_cast<size_t>(naxes));
    for (int64_t a = 0; a < naxes; ++a) {
      owner[a] = Chance(0.25) ? -1 : Uniform(0, used - 1);
    }
    // Order of axes in the tile assignment: per tensor dim (ascending dim),
    // its axes (random order among them), then replicated axes.
    std::vector<int64_t> order;
    std::vector<int64_t> tiles(static_cast<size_t>(rank), 1);
    int64_t replicate = 1;
    std::vector<std::pair<int64_t, int64_t>> dim_and_slot;
    for (int k = 0; k < used; ++k) dim_and_slot.push_back({tensor_dims[k], k});
    std::sort(dim_and_slot.begin(), dim_and_slot.end());
    bool any_tiled = false;
    for (auto [dim, slot] : dim_and_slot) {
      std::vector<int64_t> mine;
      for (int64_t a = 0; a < naxes; ++a)
        if (owner[a] == slot) mine.push_back(a);
      if (Chance(0.5)) std::reverse(mine.begin(), mine.end());
      for (int64_t a : mine) {
        order.push_back(a);
        tiles[dim] *= axes[a];
        any_tiled = true;
      }
    }
    for (int64_t a = 0; a < naxes; ++a) {
      if (owner[a] == -1) {
        order.push_back(a);
        replicate *= axes[a];
      }
    }
    if (!any_tiled) return "replicated";
    // Transpose the device array over `axes` into `order`.
    std::vector<int64_t> strides(static_cast<size_t>(naxes), 1);
    for (int64_t a = naxes - 2; a >= 0; --a) strides[a] = strides[a + 1] * axes[a + 1];
    std::vector<int64_t> out;
    std::vector<int64_t> idx(static_cast<size_t>(naxes), 0);  // index over `order`
    for (int64_t k = 0; k < mesh_.devices; ++k) {
      int64_t flat = 0;
      for (int64_t i = 0; i < naxes; ++i) flat += idx[i] * strides[order[i]];
      out.push_back(devices[flat]);
      for (int64_t i = naxes - 1; i >= 0; --i) {
        if (++idx[i] < axes[order[i]]) break;
        idx[i] = 0;
      }
    }
    std::vector<int64_t> tdims = tiles;
    if (replicate > 1) tdims.push_back(replicate);
    // The devices of a replication group sometimes hold partial values.
    const char* subgroup = !(replicate > 1)  ? ""
                           : Chance(0.15)    ? " last_tile_dims={unreduced}"
                                             : " last_tile_dim_replicate";
    return absl::StrCat("devices=[", absl::StrJoin(tdims, ","), "]", DeviceList(out), subgroup);
  }

  // A device list as text: explicit, or in the iota form XLA prints
  // (`<=[8]`, `<=[2,4]T(1,0)`) when it is one.
  std::string DeviceList(const std::vector<int64_t>& devices) {
    const int64_t n = static_cast<int64_t>(devices.size());
    std::vector<int64_t> iota(devices.size());
    std::iota(iota.begin(), iota.end(), 0);
    if (devices == iota && Chance(0.5)) return absl::StrCat("<=[", n, "]");
    // The transpose of a 2 x n/2 iota: 0, n/2, 1, n/2+1, ...
    if (n >= 4 && Chance(0.5)) {
      std::vector<int64_t> transposed;
      for (int64_t j = 0; j < n / 2; ++j)
        for (int64_t i = 0; i < 2; ++i) transposed.push_back(i * (n / 2) + j);
      if (devices == transposed) return absl::StrCat("<=[2,", n / 2, "]T(1,0)");
    }
    return absl::StrJoin(devices, ",");
  }

  // Now and then puts the value in a shard group of values of its shape
  // (`shard_as`: one sharding for all; `shard_like`: a hint), with or
  // without a sharding of its own.
  std::string MaybeShardGroup(const Value& v, std::string sharding) {
    if (v.rank() == 0 || mesh_.devices == 1 || !Chance(0.06)) return sharding;
    const std::string kind = Chance(0.5) ? "shard_as" : "shard_like";
    auto [it, fresh] = shard_groups_.emplace(absl::StrCat(v.type, ShapeText(v)),
                                             static_cast<int64_t>(shard_groups_.size()));
    (void)fresh;
    if (sharding.empty()) return absl::StrCat(", sharding={unknown ", kind, " ", it->second, "}");
    sharding.pop_back();  // the closing brace
    return absl::StrCat(sharding, " ", kind, " ", it->second, "}");
  }

  std::string MaybeSharding(int64_t rank, double p) {
    if (!Chance(p)) return "";
    return absl::StrCat(", sharding={", RandomSharding(rank), "}");
  }

  // ---- values -----------------------------------------------------------
  // An existing value of rank in [min_rank, max_rank] (recent ones more
  // often), or a new parameter.
  Value Pick(int min_rank = 0, int max_rank = 4) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].rank() >= min_rank && pool_[i].rank() <= max_rank) ok.push_back(i);
    if (ok.empty() || Chance(0.1)) return NewParameter(RandomType(), RandomDims(Uniform(min_rank, max_rank)));
    if (Chance(0.6)) {
      size_t from = ok.size() > 3 ? ok.size() - 3 : 0;
      return pool_[ok[static_cast<size_t>(Uniform(static_cast<int>(from), static_cast<int>(ok.size()) - 1))]];
    }
    return pool_[ok[static_cast<size_t>(Uniform(0, static_cast<int>(ok.size()) - 1))]];
  }
  Value PickAny() { return Pick(); }
  Value PickRanked(int min_rank) { return Pick(min_rank); }

  Value NewParameter(const std::string& type, const std::vector<int64_t>& dims) {
    Value v{Fresh("p"), type, dims};
    params_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " parameter(",
                                   params_.size(), ")", MaybeSharding(v.rank(), 0.8)));
    pool_.push_back(v);
    return v;
  }

  // A value of exactly this type and shape: an existing one or a new one.
  Value Need(const std::string& type, const std::vector<int64_t>& dims) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].type == type && pool_[i].dims == dims) ok.push_back(i);
    if (!ok.empty() && Chance(0.6)) return pool_[ok[static_cast<size_t>(Uniform(0, static_cast<int>(ok.size()) - 1))]];
    if (params_.size() < 6 || Chance(0.3)) return NewParameter(type, dims);
    // An iota then, as data.
    Value v{Fresh("iota"), type, dims};
    if (dims.empty()) {
      lines_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " constant(", Uniform(-3, 3), ")"));
    } else {
      lines_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " iota(), iota_dimension=",
                                    Uniform(0, static_cast<int>(dims.size()) - 1)));
    }
    pool_.push_back(v);
    return v;
  }

  // Emits `text` (the op and its attributes) as a new value, maybe sharded.
  Value Emit(const std::string& base, const std::string& type, const std::vector<int64_t>& dims,
             const std::string& text, double shard_p = kIntermediateShardingP) {
    Value v{Fresh(base), type, dims};
    lines_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " ", text,
                                  absl::StrContains(text, "sharding=")
                                      ? ""
                                      : MaybeShardGroup(v, MaybeSharding(v.rank(), shard_p))));
    pool_.push_back(v);
    return v;
  }

  std::string ConstantScalar(const std::string& type, int64_t value) {
    std::string name = Fresh("c");
    lines_.push_back(absl::StrCat("  %", name, " = ", type, "[] constant(", value, ")"));
    return name;
  }

  // ---- ops --------------------------------------------------------------
  void Step() {
    struct Choice {
      bool enabled;
      int weight;
      void (ProgramGenerator::*fn)();
    };
    const Choice choices[] = {
        {kGenerateUnary, 6, &ProgramGenerator::Unary},
        {kGenerateBinary, 8, &ProgramGenerator::Binary},
        {kGenerateCompareSelect, 3, &ProgramGenerator::CompareSelect},
        {kGenerateBroadcast, 4, &ProgramGenerator::Broadcast},
        {kGenerateReshape, 4, &ProgramGenerator::Reshape},
        {kGenerateTranspose, 4, &ProgramGenerator::Transpose},
        {kGenerateSlice, 3, &ProgramGenerator::Slice},
        {kGeneratePad, 3, &ProgramGenerator::Pad},
        {kGenerateConcatenate, 3, &ProgramGenerator::Concatenate},
        {kGenerateReverse, 2, &ProgramGenerator::Reverse},
        {kGenerateReduceWindow, 2, &ProgramGenerator::ReduceWindow},
        {kGenerateConvolution, 2, &ProgramGenerator::Convolution},
        {kGenerateRaggedDot, 1, &ProgramGenerator::RaggedDot},
        {kGenerateDynamicSlice, 2, &ProgramGenerator::DynamicSlice},
        {kGenerateDynamicUpdateSlice, 2, &ProgramGenerator::DynamicUpdateSlice},
        {kGenerateGather, 2, &ProgramGenerator::Gather},
        {kGenerateScatter, 2, &ProgramGenerator::Scatter},
        {kGenerateReduce, 5, &ProgramGenerator::Reduce},
        {kGenerateArgmax, 2, &ProgramGenerator::Argmax},
        {kGenerateTopK, 1, &ProgramGenerator::TopK},
        {kGenerateDot, 6, &ProgramGenerator::Dot},
        {kGenerateIota, 1, &ProgramGenerator::Iota},
        {kGenerateConstant, 1, &ProgramGenerator::Constant},
        {kGenerateConvert, 2, &ProgramGenerator::Convert},
        {kGenerateTuple, 2, &ProgramGenerator::TupleGte},
        {kGenerateWhile, 1, &ProgramGenerator::While},
        {kGenerateCall, 1, &ProgramGenerator::Call},
        {kGenerateConditional, 1, &ProgramGenerator::Conditional},
        {kGenerateManualRegion, 2, &ProgramGenerator::ManualRegion},
        {kGenerateComplexDetour, 2, &ProgramGenerator::ComplexDetour},
    };
    int total = 0;
    for (const Choice& c : choices)
      if (c.enabled) total += c.weight;
    int r = Uniform(0, total - 1);
    for (const Choice& c : choices) {
      if (!c.enabled) continue;
      if (r < c.weight) {
        (this->*c.fn)();
        return;
      }
      r -= c.weight;
    }
  }

  void Unary() {
    Value a = PickAny();
    static const char* ops[] = {"negate", "abs", "sign", "copy"};
    Emit("neg", a.type, a.dims, absl::StrCat(ops[Uniform(0, 3)], "(%", a.name, ")"));
  }

  void Binary() {
    Value a = PickAny();
    Value b = Need(a.type, a.dims);
    static const char* ops[] = {"add", "subtract", "multiply", "maximum", "minimum"};
    Emit("bin", a.type, a.dims, absl::StrCat(ops[Uniform(0, 4)], "(%", a.name, ", %", b.name, ")"));
  }

  void CompareSelect() {
    Value a = PickAny();
    Value b = Need(a.type, a.dims);
    static const char* dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    std::string c = Fresh("cmp");
    lines_.push_back(absl::StrCat("  %", c, " = ", ShapeText("pred", a.dims), " compare(%", a.name,
                                  ", %", b.name, "), direction=", dirs[Uniform(0, 5)],
                                  MaybeSharding(a.rank(), 0.3)));
    if (Chance(0.5)) std::swap(a, b);
    Emit("sel", a.type, a.dims, absl::StrCat("select(%", c, ", %", a.name, ", %", b.name, ")"));
  }

  void Broadcast() {
    Value a = Pick(0, 3);
    const int out_rank = Uniform(static_cast<int>(a.rank()), 4);
    std::vector<int64_t> positions(static_cast<size_t>(out_rank));
    std::iota(positions.begin(), positions.end(), 0);
    std::shuffle(positions.begin(), positions.end(), rng_);
    positions.resize(static_cast<size_t>(a.rank()));
    std::sort(positions.begin(), positions.end());
    std::vector<int64_t> dims = RandomDims(out_rank);
    for (int64_t i = 0; i < a.rank(); ++i) dims[positions[i]] = a.dims[i];
    Emit("bcast", a.type, dims,
         absl::StrCat("broadcast(%", a.name, "), dimensions={", absl::StrJoin(positions, ","), "}"));
  }

  void Reshape() {
    Value a = PickAny();
    std::vector<int64_t> d = a.dims;
    for (int tries = 0; tries < 2; ++tries) {
      int kind = Uniform(0, 3);
      if (kind == 0 && d.size() >= 2) {  // merge adjacent dims
        size_t i = static_cast<size_t>(Uniform(0, static_cast<int>(d.size()) - 2));
        d[i] *= d[i + 1];
        d.erase(d.begin() + static_cast<long>(i) + 1);
      } else if (kind == 1 && !d.empty() && d.size() < 4) {  // split a dim
        size_t i = static_cast<size_t>(Uniform(0, static_cast<int>(d.size()) - 1));
        std::vector<int64_t> fs;
        for (int64_t f = 1; f <= d[i]; ++f)
          if (d[i] % f == 0) fs.push_back(f);
        int64_t f = fs[static_cast<size_t>(Uniform(0, static_cast<int>(fs.size()) - 1))];
        d[i] /= f;
        d.insert(d.begin() + static_cast<long>(i), f);
      } else if (kind == 2 && d.size() < 4) {  // insert a 1
        d.insert(d.begin() + Uniform(0, static_cast<int>(d.size())), 1);
      } else if (kind == 3) {  // drop a 1
        auto it = std::find(d.begin(), d.end(), 1);
        if (it != d.end()) d.erase(it);
      }
    }
    Emit("reshape", a.type, d, absl::StrCat("reshape(%", a.name, ")"));
  }

  void Transpose() {
    Value a = PickRanked(2);
    std::vector<int64_t> perm(static_cast<size_t>(a.rank()));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng_);
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(a.dims[p]);
    Emit("transpose", a.type, dims,
         absl::StrCat("transpose(%", a.name, "), dimensions={", absl::StrJoin(perm, ","), "}"));
  }

  void Slice() {
    Value a = PickRanked(1);
    if (!kGenerateSliceKeepingWholeDims &&
        std::find(a.dims.begin(), a.dims.end(), 1) != a.dims.end()) {
      return;
    }
    std::vector<std::string> spec;
    std::vector<int64_t> dims;
    for (int64_t d : a.dims) {
      int start = Uniform(0, static_cast<int>(d) - 1);
      int limit = Uniform(start + 1, static_cast<int>(d));
      int stride = Chance(0.25) ? 2 : 1;
      if (kGenerateSliceKeepingWholeDims && Chance(0.3)) { start = 0; limit = static_cast<int>(d); }
      if (!kGenerateSliceKeepingWholeDims && start == 0 && limit == d && stride == 1) {
        if (Chance(0.5)) ++start; else --limit;
      }
      spec.push_back(absl::StrCat("[", start, ":", limit, ":", stride, "]"));
      dims.push_back((limit - start + stride - 1) / stride);
    }
    Emit("slice", a.type, dims, absl::StrCat("slice(%", a.name, "), slice={", absl::StrJoin(spec, ", "), "}"));
  }

  void Pad() {
    Value a = PickRanked(1);
    std::string pv = ConstantScalar(a.type, Uniform(-2, 2));
    std::vector<std::string> cfg;
    std::vector<int64_t> dims;
    for (int64_t d : a.dims) {
      int interior = Chance(0.2) ? 1 : 0;
      int lo = Uniform(0, 2), hi = Uniform(0, 2);
      if (kGenerateNegativePadding && d >= 3 && Chance(0.15)) lo = -1;
      if (kGenerateNegativePadding && d >= 3 && Chance(0.15)) hi = -1;
      if (Chance(0.3)) { lo = 0; hi = 0; interior = 0; }
      int64_t out = lo + hi + d + (d - 1) * interior;
      dims.push_back(out);
      cfg.push_back(interior ? absl::StrCat(lo, "_", hi, "_", interior) : absl::StrCat(lo, "_", hi));
    }
    Emit("pad", a.type, dims,
         absl::StrCat("pad(%", a.name, ", %", pv, "), padding=", absl::StrJoin(cfg, "x")));
  }

  void Concatenate() {
    Value a = PickRanked(1);
    const int64_t dim = Uniform(0, static_cast<int>(a.rank()) - 1);
    std::vector<std::string> names{"%" + a.name};
    std::vector<int64_t> dims = a.dims;
    const int more = Chance(0.7) ? 1 : 2;
    for (int i = 0; i < more; ++i) {
      std::vector<int64_t> d = a.dims;
      d[dim] = Dim();
      Value b = Need(a.type, d);
      names.push_back("%" + b.name);
      dims[dim] += d[dim];
    }
    Emit("concat", a.type, dims,
         absl::StrCat("concatenate(", absl::StrJoin(names, ", "), "), dimensions={", dim, "}"));
  }

  void Reverse() {
    Value a = PickRanked(1);
    std::vector<int64_t> rd;
    for (int64_t d = 0; d < a.rank(); ++d)
      if (Chance(0.5)) rd.push_back(d);
    if (rd.empty()) rd.push_back(Uniform(0, static_cast<int>(a.rank()) - 1));
    Emit("rev", a.type, a.dims,
         absl::StrCat("reverse(%", a.name, "), dimensions={", absl::StrJoin(rd, ","), "}"));
  }

  void ReduceWindow() {
    Value a = PickRanked(1);
    std::vector<std::string> size, stride, pad;
    std::vector<int64_t> dims;
    for (int64_t d : a.dims) {
      int lo = Uniform(0, 1), hi = Uniform(0, 1);
      int k = Uniform(1, std::min<int>(3, static_cast<int>(d) + lo + hi));
      int st = Chance(0.3) ? 2 : 1;
      if (Chance(0.3)) { lo = hi = 0; k = 1; st = 1; }
      size.push_back(absl::StrCat(k));
      stride.push_back(absl::StrCat(st));
      pad.push_back(absl::StrCat(lo, "_", hi));
      dims.push_back((d + lo + hi - k) / st + 1);
    }
    const bool add = Chance(0.6);
    // Now and then an init value that is not the identity: it must enter
    // each window once however the window is split.
    std::string init_value = add ? (Chance(0.3) ? "1" : "0")
                                 : (a.type == "f32" ? (Chance(0.3) ? "-3" : "-inf") : "-2147483648");
    std::string init = Fresh("init");
    lines_.push_back(absl::StrCat("  %", init, " = ", a.type, "[] constant(", init_value, ")"));
    Emit("rw", a.type, dims,
         absl::StrCat("reduce-window(%", a.name, ", %", init, "), window={size=",
                      absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"), " pad=",
                      absl::StrJoin(pad, "x"), "}, to_apply=%", add ? "add_" : "maximum_", a.type));
  }

  void Convolution() {
    Value a = PickRanked(3);
    if (a.type != "f32" || a.rank() > 4) {
      a = NewParameter("f32", {Dim(), Uniform(3, 9), Uniform(3, 9), Dim()});
    }
    const int64_t rank = a.rank();
    // Labels of each tensor in a random order: batch, feature, spatial.
    std::string lhs_labels = rank == 3 ? "bf0" : "bf01";
    std::string out_labels = lhs_labels;
    std::string kernel_labels = rank == 3 ? "io0" : "io01";
    std::shuffle(lhs_labels.begin(), lhs_labels.end(), rng_);
    std::shuffle(out_labels.begin(), out_labels.end(), rng_);
    std::shuffle(kernel_labels.begin(), kernel_labels.end(), rng_);
    auto lhs_dim = [&](char c) { return a.dims[lhs_labels.find(c)]; };
    // A weight gradient's form now and then: the kernel nearly as wide as
    // the input, a result of a few taps (window_split_convolution.h).
    const bool weight_gradient = Chance(0.3);
    // Feature groups (depthwise when each group has one feature) or batch
    // groups (their weight gradients) now and then.
    int64_t feature_groups = 1, batch_groups = 1;
    if (!weight_gradient && Chance(0.3)) {
      const int64_t g = Uniform(2, 4);
      if (Chance(0.7) && lhs_dim('f') % g == 0) {
        feature_groups = g;
      } else if (lhs_dim('b') % g == 0) {
        batch_groups = g;
      }
    }
    const int64_t groups = feature_groups * batch_groups;
    const int64_t out_features = groups > 1 ? groups * Uniform(1, 3) : Dim();
    std::vector<std::string> size, stride, pad, dilate, base_dilate;
    std::vector<int64_t> kernel_dims(static_cast<size_t>(rank)), out(static_cast<size_t>(rank));
    for (int64_t k = 0; k < rank - 2; ++k) {
      const char c = static_cast<char>('0' + k);
      const int64_t n = lhs_dim(c);
      int64_t w = Uniform(1, 3), st = Chance(0.3) ? 2 : 1, rd = Chance(0.2) ? 2 : 1;
      int64_t ld = Chance(0.2) ? 2 : 1, lo = Uniform(-1, 2), hi = Uniform(-1, 2);
      if (weight_gradient) {
        w = std::max<int64_t>(1, n - Uniform(0, 1));
        st = ld = 1;
        rd = Chance(0.2) && n % 2 == 0 ? 2 : 1;
        if (rd == 2) w = n / 2;
        lo = Uniform(0, 1);
        hi = Uniform(0, 1);
      }
      const int64_t span = (w - 1) * rd + 1, dilated = (n - 1) * ld + 1;
      if (dilated + lo + hi < span) lo = hi = span;
      size.push_back(absl::StrCat(w));
      stride.push_back(absl::StrCat(st));
      pad.push_back(absl::StrCat(lo, "_", hi));
      dilate.push_back(absl::StrCat(rd));
      base_dilate.push_back(absl::StrCat(ld));
      kernel_dims[kernel_labels.find(c)] = w;
      out[out_labels.find(c)] = (dilated + lo + hi - span) / st + 1;
    }
    kernel_dims[kernel_labels.find('i')] = lhs_dim('f') / feature_groups;
    kernel_dims[kernel_labels.find('o')] = out_features;
    out[out_labels.find('b')] = lhs_dim('b') / batch_groups;
    out[out_labels.find('f')] = out_features;
    Value kernel = Need("f32", kernel_dims);
    if (weight_gradient && mesh_.devices > 1 && Chance(0.5)) {
      // Input and kernel split alike along spatial dim 0 (the window-split
      // plan's case), through sharding constraints.
      auto split = [&](const Value& v, int64_t dim) {
        std::vector<int64_t> tiles(static_cast<size_t>(v.rank()), 1);
        tiles[static_cast<size_t>(dim)] = mesh_.devices;
        return Emit("split", v.type, v.dims,
                    absl::StrCat("custom-call(%", v.name,
                                 "), custom_call_target=\"Sharding\", sharding={devices=[",
                                 absl::StrJoin(tiles, ","), "]<=[", mesh_.devices, "]}"),
                    0.0);
      };
      a = split(a, static_cast<int64_t>(lhs_labels.find('0')));
      kernel = split(kernel, static_cast<int64_t>(kernel_labels.find('0')));
    }
    Emit("conv", "f32", out,
         absl::StrCat("convolution(%", a.name, ", %", kernel.name, "), window={size=",
                      absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"),
                      " pad=", absl::StrJoin(pad, "x"), " rhs_dilate=", absl::StrJoin(dilate, "x"),
                      " lhs_dilate=", absl::StrJoin(base_dilate, "x"), "}, dim_labels=",
                      lhs_labels, "_", kernel_labels, "->", out_labels,
                      feature_groups > 1 ? absl::StrCat(", feature_group_count=", feature_groups) : "",
                      batch_groups > 1 ? absl::StrCat(", batch_group_count=", batch_groups) : ""));
  }

  void RaggedDot() {
    Value x = PickRanked(2);
    if (x.type != "f32" || x.rank() != 2) x = NewParameter("f32", {Uniform(2, 9), Dim()});
    const int64_t rows = x.dims[0], groups = Uniform(1, 3), n = Dim();
    Value w = Need("f32", {groups, x.dims[1], n});
    // Group sizes that may leave the last rows in no group.
    std::vector<int64_t> sizes;
    int64_t left = rows;
    for (int64_t g = 0; g < groups; ++g) {
      sizes.push_back(Uniform(0, static_cast<int>(left)));
      left -= sizes.back();
    }
    std::string name = Fresh("sizes");
    lines_.push_back(absl::StrCat("  %", name, " = s32[", groups, "] constant({",
                                  absl::StrJoin(sizes, ", "), "})"));
    Emit("rdot", "f32", {rows, n},
         absl::StrCat("ragged-dot(%", x.name, ", %", w.name, ", %", name,
                      "), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
                      "lhs_ragged_dims={0}, rhs_group_dims={0}"));
  }

  std::vector<std::string> Starts(const std::vector<int64_t>& dims, const std::vector<int64_t>& sizes) {
    std::vector<std::string> names;
    for (size_t i = 0; i < dims.size(); ++i) {
      // Sometimes out of range, to exercise clamping.
      int v = Uniform(Chance(0.1) ? -1 : 0, static_cast<int>(dims[i] - sizes[i]) + (Chance(0.1) ? 2 : 0));
      names.push_back(absl::StrCat("%", ConstantScalar("s32", v)));
    }
    return names;
  }

  void DynamicSlice() {
    Value a = PickRanked(1);
    std::vector<int64_t> sizes;
    for (int64_t d : a.dims) sizes.push_back(Chance(0.3) ? d : Uniform(1, static_cast<int>(d)));
    std::vector<std::string> starts = Starts(a.dims, sizes);
    Emit("ds", a.type, sizes,
         absl::StrCat("dynamic-slice(%", a.name, ", ", absl::StrJoin(starts, ", "),
                      "), dynamic_slice_sizes={", absl::StrJoin(sizes, ","), "}"));
  }

  void DynamicUpdateSlice() {
    Value a = PickRanked(1);
    std::vector<int64_t> sizes;
    for (int64_t d : a.dims) sizes.push_back(Chance(0.3) ? d : Uniform(1, static_cast<int>(d)));
    Value u = Need(a.type, sizes);
    std::vector<std::string> starts = Starts(a.dims, sizes);
    Emit("dus", a.type, a.dims,
         absl::StrCat("dynamic-update-slice(%", a.name, ", %", u.name, ", ",
                      absl::StrJoin(starts, ", "), ")"));
  }

  // Gather and scatter. Which operand dims are indexed, collapsed (or
  // inserted), batching or windowed is random, and so is the layout of the
  // indices; index values are random parameters (in [-4, 4], so some are
  // out of range: gather clamps them, scatter skips their windows) or iotas.
  struct IndexForm {
    std::vector<int64_t> batching;   // operand batching dims (sorted)
    std::vector<int64_t> index_map;  // operand dims the index vector addresses
    std::vector<int64_t> single;     // indexed dims with a window of 1, collapsed/inserted
    std::vector<int64_t> window;     // per operand dim: the slice / window size
    std::vector<int64_t> indices;    // dims of the indices
    int64_t index_vector_dim = 0;
    std::vector<int64_t> indices_batching;  // dims of the indices paired with `batching`
    std::vector<int64_t> batch_sizes;       // the indices' dims but the vector dim, in order
  };

  IndexForm RandomIndexForm(const Value& a) {
    IndexForm f;
    const int64_t rank = a.rank();
    std::vector<int64_t> order(static_cast<size_t>(rank));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    size_t next = 0;
    if (rank >= 2 && Chance(0.3)) f.batching.push_back(order[next++]);
    const int n_index = Uniform(1, std::min<int>(2, static_cast<int>(rank - static_cast<int64_t>(next))));
    for (int i = 0; i < n_index; ++i) f.index_map.push_back(order[next++]);
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = a.dims[static_cast<size_t>(d)];
      const bool indexed =
          std::find(f.index_map.begin(), f.index_map.end(), d) != f.index_map.end();
      if (std::find(f.batching.begin(), f.batching.end(), d) != f.batching.end()) {
        f.window.push_back(1);
      } else if (indexed && Chance(0.6)) {
        f.window.push_back(1);
        f.single.push_back(d);
      } else if (!indexed && Chance(0.6)) {
        f.window.push_back(size);
      } else {
        f.window.push_back(Uniform(1, static_cast<int>(size)));
      }
    }
    // The indices' batch dims: the batching dims' partners and up to two
    // more, in random order; then the index vector dim, somewhere or implicit.
    std::vector<std::pair<int64_t, bool>> batch;  // (size, is a batching partner)
    for (int64_t d : f.batching) batch.push_back({a.dims[static_cast<size_t>(d)], true});
    const int extra = Uniform(0, 2);
    // Now and then an extra batch dim as long as an indexed dim of window 1,
    // so that iota indices can make them batch dims in all but name.
    const bool matched = !f.single.empty() && Chance(0.4);
    for (int i = 0; i < extra; ++i) {
      batch.push_back({matched && i == 0 ? a.dims[static_cast<size_t>(f.single[0])] : Dim(), false});
    }
    std::shuffle(batch.begin(), batch.end(), rng_);
    const int64_t nb = static_cast<int64_t>(batch.size());
    f.index_vector_dim = f.index_map.size() == 1 && Chance(0.3) ? nb : Uniform(0, static_cast<int>(nb));
    for (int64_t i = 0; i < nb; ++i) {
      if (i == f.index_vector_dim) f.indices.push_back(static_cast<int64_t>(f.index_map.size()));
      if (batch[static_cast<size_t>(i)].second) f.indices_batching.push_back(static_cast<int64_t>(f.indices.size()));
      f.indices.push_back(batch[static_cast<size_t>(i)].first);
      f.batch_sizes.push_back(batch[static_cast<size_t>(i)].first);
    }
    if (f.index_vector_dim == nb && f.index_map.size() > 1) f.indices.push_back(static_cast<int64_t>(f.index_map.size()));
    if (f.index_vector_dim == nb && f.index_map.size() == 1 && Chance(0.5)) f.indices.push_back(1);
    return f;
  }

  // Window dims (sizes in operand order) placed at random sorted positions
  // among the batch dims: returns the positions and fills `dims`.
  std::vector<int64_t> PlaceWindows(const std::vector<int64_t>& windows,
                                    const std::vector<int64_t>& batch, std::vector<int64_t>& dims) {
    const size_t rank = windows.size() + batch.size();
    std::vector<int64_t> slots(rank);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng_);
    slots.resize(windows.size());
    std::sort(slots.begin(), slots.end());
    dims.assign(rank, 0);
    size_t w = 0, b = 0;
    for (size_t i = 0; i < rank; ++i) {
      bool is_window = w < slots.size() && slots[w] == static_cast<int64_t>(i);
      dims[i] = is_window ? windows[w++] : batch[b++];
    }
    return slots;
  }

  static std::string Dims(const std::vector<int64_t>& v) {
    return absl::StrCat("{", absl::StrJoin(v, ","), "}");
  }

  std::string BatchingAttrs(const IndexForm& f, const char* operand_name, const char* indices_name) {
    if (f.batching.empty()) return "";
    return absl::StrCat(", ", operand_name, "=", Dims(f.batching), ", ", indices_name, "=",
                        Dims(f.indices_batching));
  }

  // The indices: now and then an iota along an indices dim as long as the
  // one operand dim they address with a window of 1 (XLA's implicit batch
  // dims: row k reads row k), else any s32 value of their shape.
  Value Indices(const Value& a, const IndexForm& f) {
    if (f.index_map.size() == 1 && Chance(0.5) &&
        std::find(f.single.begin(), f.single.end(), f.index_map[0]) != f.single.end()) {
      const int64_t want = a.dims[static_cast<size_t>(f.index_map[0])];
      for (int64_t i = 0; i < static_cast<int64_t>(f.indices.size()); ++i) {
        if (i == f.index_vector_dim || f.indices[static_cast<size_t>(i)] != want) continue;
        Value v{Fresh("rows"), "s32", f.indices};
        lines_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " iota(), iota_dimension=", i));
        pool_.push_back(v);
        return v;
      }
    }
    return Need("s32", f.indices);
  }

  void Gather() {
    Value a = Pick(1, 3);
    IndexForm f = RandomIndexForm(a);
    Value idx = Indices(a, f);
    std::vector<int64_t> offsets;
    for (int64_t d = 0; d < a.rank(); ++d) {
      if (std::find(f.single.begin(), f.single.end(), d) == f.single.end() &&
          std::find(f.batching.begin(), f.batching.end(), d) == f.batching.end())
        offsets.push_back(f.window[static_cast<size_t>(d)]);
    }
    std::vector<int64_t> out;
    std::vector<int64_t> offset_dims = PlaceWindows(offsets, f.batch_sizes, out);
    Emit("gather", a.type, out,
         absl::StrCat("gather(%", a.name, ", %", idx.name, "), offset_dims=", Dims(offset_dims),
                      ", collapsed_slice_dims=", Dims(f.single), ", start_index_map=",
                      Dims(f.index_map),
                      BatchingAttrs(f, "operand_batching_dims", "start_indices_batching_dims"),
                      ", index_vector_dim=", f.index_vector_dim, ", slice_sizes=", Dims(f.window)));
  }

  void Scatter() {
    Value a = Pick(1, 3);
    IndexForm f = RandomIndexForm(a);
    Value idx = Indices(a, f);
    std::vector<int64_t> windows;
    for (int64_t d = 0; d < a.rank(); ++d) {
      if (std::find(f.single.begin(), f.single.end(), d) == f.single.end() &&
          std::find(f.batching.begin(), f.batching.end(), d) == f.batching.end())
        windows.push_back(f.window[static_cast<size_t>(d)]);
    }
    std::vector<int64_t> upd_dims;
    std::vector<int64_t> window_dims = PlaceWindows(windows, f.batch_sizes, upd_dims);
    Value upd = Need(a.type, upd_dims);
    Emit("scatter", a.type, a.dims,
         absl::StrCat("scatter(%", a.name, ", %", idx.name, ", %", upd.name,
                      "), update_window_dims=", Dims(window_dims), ", inserted_window_dims=",
                      Dims(f.single), ", scatter_dims_to_operand_dims=", Dims(f.index_map),
                      BatchingAttrs(f, "input_batching_dims", "scatter_indices_batching_dims"),
                      ", index_vector_dim=", f.index_vector_dim, ", to_apply=%",
                      Chance(0.6) ? "add_" : "maximum_", a.type));
  }

  void Reduce() {
    Value a = PickRanked(1);
    std::vector<int64_t> rd, out;
    for (int64_t d = 0; d < a.rank(); ++d) {
      if (Chance(0.45)) rd.push_back(d);
      else out.push_back(a.dims[d]);
    }
    if (rd.empty()) {
      rd.push_back(Uniform(0, static_cast<int>(a.rank()) - 1));
      out.clear();
      for (int64_t d = 0; d < a.rank(); ++d)
        if (d != rd[0]) out.push_back(a.dims[d]);
    }
    const bool add = Chance(0.6);
    std::string init = Fresh("init");
    std::string init_value = add ? "0" : (a.type == "f32" ? "-inf" : "-2147483648");
    lines_.push_back(absl::StrCat("  %", init, " = ", a.type, "[] constant(", init_value, ")"));
    Emit("reduce", a.type, out,
         absl::StrCat("reduce(%", a.name, ", %", init, "), dimensions={", absl::StrJoin(rd, ","),
                      "}, to_apply=%", add ? "add_" : "maximum_", a.type));
  }

  // argmax along one dim: a variadic reduce of (values, iota indices) whose
  // comparator breaks ties by the lower index; both results join the pool.
  void Argmax() {
    Value a = PickRanked(1);
    if (a.type == "c64") return;
    const int64_t d = Uniform(0, static_cast<int>(a.rank()) - 1);
    std::vector<int64_t> out;
    for (int64_t k = 0; k < a.rank(); ++k)
      if (k != d) out.push_back(a.dims[k]);
    const std::string comparator = "argmax_" + a.type;
    if (argmax_types_.insert(a.type).second) {
      computations_.push_back(absl::StrCat(
          "%", comparator, " {\n  %av = ", a.type, "[] parameter(0)\n  %ai = s32[] parameter(1)\n",
          "  %bv = ", a.type, "[] parameter(2)\n  %bi = s32[] parameter(3)\n",
          "  %gt = pred[] compare(%av, %bv), direction=GT\n",
          "  %eq = pred[] compare(%av, %bv), direction=EQ\n",
          "  %lt = pred[] compare(%ai, %bi), direction=LT\n  %tie = pred[] and(%eq, %lt)\n",
          "  %pick = pred[] or(%gt, %tie)\n  %v = ", a.type, "[] select(%pick, %av, %bv)\n",
          "  %i = s32[] select(%pick, %ai, %bi)\n  ROOT %t = (", a.type,
          "[], s32[]) tuple(%v, %i)\n}\n"));
    }
    Value index = Emit("iota", "s32", a.dims, absl::StrCat("iota(), iota_dimension=", d));
    const std::string lowest = Fresh("init"), first = Fresh("init");
    lines_.push_back(absl::StrCat("  %", lowest, " = ", a.type, "[] constant(",
                                  a.type == "f32" ? "-inf" : "-2147483648", ")"));
    lines_.push_back(absl::StrCat("  %", first, " = s32[] constant(0)"));
    std::string sharding;
    if (Chance(kIntermediateShardingP * 2)) {
      const std::string leaf = RandomSharding(static_cast<int64_t>(out.size()));
      sharding = absl::StrCat(", sharding={{", leaf, "}, {", leaf, "}}");
    }
    const std::string r = Fresh("argmax");
    lines_.push_back(absl::StrCat("  %", r, " = (", ShapeText(a.type, out), ", ", ShapeText("s32", out),
                                  ") reduce(%", a.name, ", %", index.name, ", %", lowest, ", %",
                                  first, "), dimensions={", d, "}, to_apply=%", comparator,
                                  sharding));
    Emit("max", a.type, out, absl::StrCat("get-tuple-element(%", r, "), index=0"));
    Emit("argmax", "s32", out, absl::StrCat("get-tuple-element(%", r, "), index=1"));
  }

  // topk along the last dim, largest or smallest; both results join the pool.
  void TopK() {
    Value a = PickRanked(1);
    if (a.type == "c64") return;
    std::vector<int64_t> out = a.dims;
    out.back() = Uniform(1, static_cast<int>(std::min<int64_t>(a.dims.back(), 4)));
    std::string sharding;
    if (Chance(kIntermediateShardingP)) {
      const std::string leaf = RandomSharding(static_cast<int64_t>(out.size()));
      sharding = absl::StrCat(", sharding={{", leaf, "}, {", leaf, "}}");
    }
    const std::string r = Fresh("topk");
    lines_.push_back(absl::StrCat("  %", r, " = (", ShapeText(a.type, out), ", ", ShapeText("s32", out),
                                  ") topk(%", a.name, "), k=", out.back(),
                                  ", largest=", Chance(0.5) ? "true" : "false", sharding));
    Emit("top", a.type, out, absl::StrCat("get-tuple-element(%", r, "), index=0"));
    Emit("top.index", "s32", out, absl::StrCat("get-tuple-element(%", r, "), index=1"));
  }

  void Dot() {
    Value lhs = PickRanked(1);
    // Roles of lhs dims: 0 batch, 1 contracting, 2 free.
    std::vector<int> role(static_cast<size_t>(lhs.rank()));
    int nb = 0, nc = 0, nf = 0;
    for (int& r : role) {
      r = Uniform(0, 5) < 1 ? 0 : (Chance(0.5) ? 1 : 2);
      (r == 0 ? nb : r == 1 ? nc : nf)++;
    }
    if (nb + nf > 3) {  // keep the result small enough for a free rhs dim
      for (int& r : role)
        if (r == 2 && nb + nf > 3) { r = 1; --nf; ++nc; }
    }
    int max_rf = std::min(4 - nb - nf, 4 - nb - nc);
    int nrf = max_rf <= 0 ? 0 : Uniform(0, std::min(max_rf, 2));
    std::vector<int64_t> lb, lc;
    for (int64_t d = 0; d < lhs.rank(); ++d) {
      if (role[d] == 0) lb.push_back(d);
      if (role[d] == 1) lc.push_back(d);
    }
    // rhs: batch, contracting and free dims at random positions.
    std::vector<int> slots;  // 0..nb-1 batch k, 100+k contracting k, 200 free
    for (int k = 0; k < nb; ++k) slots.push_back(k);
    for (int k = 0; k < nc; ++k) slots.push_back(100 + k);
    for (int k = 0; k < nrf; ++k) slots.push_back(200);
    std::shuffle(slots.begin(), slots.end(), rng_);
    std::vector<int64_t> rdims, rb(static_cast<size_t>(nb)), rc(static_cast<size_t>(nc)), rfree;
    for (size_t i = 0; i < slots.size(); ++i) {
      int s = slots[i];
      if (s < 100) { rb[s] = static_cast<int64_t>(i); rdims.push_back(lhs.dims[lb[s]]); }
      else if (s < 200) { rc[s - 100] = static_cast<int64_t>(i); rdims.push_back(lhs.dims[lc[s - 100]]); }
      else { rfree.push_back(Dim()); rdims.push_back(rfree.back()); }
    }
    Value rhs = Need(lhs.type, rdims);
    std::vector<int64_t> out;
    for (int64_t d : lb) out.push_back(lhs.dims[d]);
    for (int64_t d = 0; d < lhs.rank(); ++d)
      if (role[d] == 2) out.push_back(lhs.dims[d]);
    for (int64_t f : rfree) out.push_back(f);
    std::string attrs;
    if (nb > 0) {
      attrs = absl::StrCat(", lhs_batch_dims={", absl::StrJoin(lb, ","), "}, rhs_batch_dims={",
                           absl::StrJoin(rb, ","), "}");
    }
    absl::StrAppend(&attrs, ", lhs_contracting_dims={", absl::StrJoin(lc, ","),
                    "}, rhs_contracting_dims={", absl::StrJoin(rc, ","), "}");
    Emit("dot", lhs.type, out, absl::StrCat("dot(%", lhs.name, ", %", rhs.name, ")", attrs));
  }

  // A detour through complex values: z = complex(a, b), a few of XLA's
  // complex ops (elementwise, a dot, a sum or product reduce, a transpose),
  // then back to f32 by real, imag or abs. Complex values stay out of the
  // pool, so every other step sees f32 and s32 values only.
  void ComplexDetour() {
    Value a = PickAny();
    if (a.type != "f32") a = Need("f32", a.dims);
    const Value b = Need("f32", a.dims);
    Value z = EmitComplex(a.dims, absl::StrCat("complex(%", a.name, ", %", b.name, ")"));
    for (int steps = Uniform(1, 3); steps > 0; --steps) {
      switch (Uniform(0, 4)) {
        case 0: {
          static const char* ops[] = {"negate", "sine", "tanh", "exponential", "sign"};
          const std::string op = ops[Uniform(0, 4)];
          // sine, tanh and exponential of a large complex value are huge,
          // and a sum of huge terms that cancel depends on the order of the
          // adds (case 24141 of session 30 compared -216.9 with 0 so):
          // they take a value of magnitude 1 (its sign).
          if (op != "negate" && op != "sign") {
            z = EmitComplex(z.dims, absl::StrCat("sign(%", z.name, ")"));
          }
          z = EmitComplex(z.dims, absl::StrCat(op, "(%", z.name, ")"));
          break;
        }
        case 1: {
          static const char* ops[] = {"add", "multiply", "subtract"};
          const Value re = Need("f32", z.dims), im = Need("f32", z.dims);
          const Value w = EmitComplex(z.dims, absl::StrCat("complex(%", re.name, ", %", im.name, ")"));
          z = EmitComplex(z.dims, absl::StrCat(ops[Uniform(0, 2)], "(%", z.name, ", %", w.name, ")"));
          break;
        }
        case 2: {  // z . z^T over the last dim: [.., k] x [.., k] -> [.., ..]
          if (z.rank() != 2) break;
          z = EmitComplex({z.dims[0], z.dims[0]},
                          absl::StrCat("dot(%", z.name, ", %", z.name,
                                       "), lhs_contracting_dims={1}, rhs_contracting_dims={1}"));
          break;
        }
        case 3: {
          if (z.rank() == 0) break;
          const int64_t d = Uniform(0, static_cast<int>(z.rank()) - 1);
          std::vector<int64_t> kept;
          for (int64_t i = 0; i < z.rank(); ++i)
            if (i != d) kept.push_back(z.dims[static_cast<size_t>(i)]);
          // Products of a few small values only: they neither vanish nor blow up.
          const bool product = z.dims[static_cast<size_t>(d)] <= 4 && Chance(0.4);
          const std::string init = Fresh("cinit");
          lines_.push_back(absl::StrCat("  %", init, " = c64[] constant((", product ? 1 : 0, ", 0))"));
          z = EmitComplex(kept, absl::StrCat("reduce(%", z.name, ", %", init, "), dimensions={", d,
                                             "}, to_apply=%", product ? "multiply" : "add", "_c64"));
          break;
        }
        default: {
          if (z.rank() < 2) break;
          std::vector<int64_t> perm(static_cast<size_t>(z.rank()));
          std::iota(perm.begin(), perm.end(), 0);
          std::shuffle(perm.begin(), perm.end(), rng_);
          std::vector<int64_t> dims;
          for (int64_t p : perm) dims.push_back(z.dims[static_cast<size_t>(p)]);
          z = EmitComplex(dims, absl::StrCat("transpose(%", z.name, "), dimensions={",
                                             absl::StrJoin(perm, ","), "}"));
        }
      }
    }
    static const char* parts[] = {"real", "imag", "abs"};
    Emit("part", "f32", z.dims, absl::StrCat(parts[Uniform(0, 2)], "(%", z.name, ")"));
  }

  // A c64 value computed by `text`, maybe sharded, kept out of the pool.
  Value EmitComplex(const std::vector<int64_t>& dims, const std::string& text) {
    Value v{Fresh("z"), "c64", dims};
    lines_.push_back(absl::StrCat("  %", v.name, " = ", ShapeText(v), " ", text,
                                  MaybeSharding(v.rank(), kIntermediateShardingP)));
    return v;
  }

  void Iota() {
    std::vector<int64_t> dims = RandomDims(Uniform(1, 4));
    Emit("iota", RandomType(), dims,
         absl::StrCat("iota(), iota_dimension=", Uniform(0, static_cast<int>(dims.size()) - 1)));
  }

  void Constant() {
    std::string type = RandomType();
    if (Chance(0.4)) {
      Emit("const", type, {}, absl::StrCat("constant(", Uniform(-3, 3), ")"));
      return;
    }
    std::vector<int64_t> dims = RandomDims(Uniform(1, 2));
    std::function<std::string(size_t)> lit = [&](size_t d) -> std::string {
      std::vector<std::string> parts;
      for (int64_t i = 0; i < dims[d]; ++i)
        parts.push_back(d + 1 == dims.size() ? absl::StrCat(Uniform(-3, 3)) : lit(d + 1));
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    };
    Emit("const", type, dims, absl::StrCat("constant(", lit(0), ")"));
  }

  // A float becomes an integer after rounding to the nearest: values that
  // are whole in exact arithmetic (|sum of unit complex numbers|) come out a
  // rounding either side of it in another order of adds, and truncation
  // would turn that into 1 (case 27267 of a 40000 run).
  void Convert() {
    Value a = PickAny();
    if (a.type != "f32") {
      Emit("convert", "f32", a.dims, absl::StrCat("convert(%", a.name, ")"));
      return;
    }
    const std::string rounded = Fresh("rounded");
    lines_.push_back(absl::StrCat("  %", rounded, " = ", ShapeText(a), " round-nearest-even(%", a.name, ")"));
    Emit("convert", "s32", a.dims, absl::StrCat("convert(%", rounded, ")"));
  }

  void TupleGte() {
    std::vector<Value> elems{PickAny(), PickAny()};
    if (Chance(0.3)) elems.push_back(PickAny());
    std::vector<std::string> shapes, names, shardings;
    for (const Value& v : elems) {
      shapes.push_back(ShapeText(v));
      names.push_back("%" + v.name);
      shardings.push_back(absl::StrCat("{", RandomSharding(v.rank()), "}"));
    }
    std::string t = Fresh("tuple");
    std::string shape = absl::StrCat("(", absl::StrJoin(shapes, ", "), ")");
    lines_.push_back(absl::StrCat("  %", t, " = ", shape, " tuple(", absl::StrJoin(names, ", "), ")",
                                  Chance(0.3) ? absl::StrCat(", sharding={", absl::StrJoin(shardings, ", "), "}") : ""));
    const int k = Uniform(0, static_cast<int>(elems.size()) - 1);
    Emit("gte", elems[k].type, elems[k].dims,
         absl::StrCat("get-tuple-element(%", t, "), index=", k));
  }

  // A shape-preserving body for control flow: y = f(x).
  std::vector<std::string> ElementwiseBody(const std::string& x, const Value& shape_of,
                                           std::string* result) {
    std::vector<std::string> out;
    const std::string s = ShapeText(shape_of);
    const std::string y = Fresh("y");
    switch (Uniform(0, 3)) {
      case 0:
        out.push_back(absl::StrCat("  %", y, " = ", s, " negate(%", x, ")"));
        break;
      case 1: {
        std::string n = Fresh("n");
        out.push_back(absl::StrCat("  %", n, " = ", s, " negate(%", x, ")"));
        out.push_back(absl::StrCat("  %", y, " = ", s, " maximum(%", x, ", %", n, ")"));
        break;
      }
      case 2: {
        std::string one = Fresh("one"), b = Fresh("ones");
        out.push_back(absl::StrCat("  %", one, " = ", shape_of.type, "[] constant(1)"));
        out.push_back(absl::StrCat("  %", b, " = ", s, " broadcast(%", one, "), dimensions={}"));
        out.push_back(absl::StrCat("  %", y, " = ", s, " add(%", x, ", %", b, ")"));
        break;
      }
      default: {
        if (shape_of.rank() == 0) {
          out.push_back(absl::StrCat("  %", y, " = ", s, " add(%", x, ", %", x, ")"));
          break;
        }
        // y = x + broadcast(sum of x over one dim).
        const int64_t d = Uniform(0, static_cast<int>(shape_of.rank()) - 1);
        std::vector<int64_t> kept, kept_dims;
        for (int64_t i = 0; i < shape_of.rank(); ++i)
          if (i != d) { kept.push_back(i); kept_dims.push_back(shape_of.dims[i]); }
        std::string z = Fresh("zero"), r = Fresh("sum"), b = Fresh("bsum");
        out.push_back(absl::StrCat("  %", z, " = ", shape_of.type, "[] constant(0)"));
        out.push_back(absl::StrCat("  %", r, " = ", ShapeText(shape_of.type, kept_dims), " reduce(%", x,
                                   ", %", z, "), dimensions={", d, "}, to_apply=%add_", shape_of.type));
        out.push_back(absl::StrCat("  %", b, " = ", s, " broadcast(%", r, "), dimensions={",
                                   absl::StrJoin(kept, ","), "}"));
        out.push_back(absl::StrCat("  %", y, " = ", s, " add(%", x, ", %", b, ")"));
      }
    }
    *result = y;
    return out;
  }

  void While() {
    Value x = PickAny();
    const std::string xs = ShapeText(x);
    const std::string ts = absl::StrCat("(s32[], ", xs, ")");
    const std::string cond = Fresh("cond"), body = Fresh("body");
    const int trips = Uniform(0, 3);
    {
      std::string p = Fresh("cp"), i = Fresh("ci"), n = Fresh("cn"), c = Fresh("cl");
      computations_.push_back(absl::StrCat(
          "%", cond, " (", p, ": ", ts, ") -> pred[] {\n", "  %", p, " = ", ts, " parameter(0)\n",
          "  %", i, " = s32[] get-tuple-element(%", p, "), index=0\n", "  %", n, " = s32[] constant(",
          trips, ")\n", "  ROOT %", c, " = pred[] compare(%", i, ", %", n, "), direction=LT\n}\n"));
    }
    {
      std::string p = Fresh("bp"), i = Fresh("bi"), bx = Fresh("bx"), one = Fresh("b1"),
                  ni = Fresh("bn"), t = Fresh("bt");
      std::string y;
      std::vector<std::string> ops = ElementwiseBody(bx, x, &y);
      computations_.push_back(absl::StrCat(
          "%", body, " (", p, ": ", ts, ") -> ", ts, " {\n", "  %", p, " = ", ts, " parameter(0)\n",
          "  %", i, " = s32[] get-tuple-element(%", p, "), index=0\n", "  %", bx, " = ", xs,
          " get-tuple-element(%", p, "), index=1\n", "  %", one, " = s32[] constant(1)\n", "  %", ni,
          " = s32[] add(%", i, ", %", one, ")\n", absl::StrJoin(ops, "\n"), "\n", "  ROOT %", t, " = ",
          ts, " tuple(%", ni, ", %", y, ")\n}\n"));
    }
    std::string zero = ConstantScalar("s32", 0);
    std::string init = Fresh("winit"), w = Fresh("while");
    lines_.push_back(absl::StrCat("  %", init, " = ", ts, " tuple(%", zero, ", %", x.name, ")"));
    std::string wsh;
    if (Chance(0.3)) wsh = absl::StrCat(", sharding={{replicated}, {", RandomSharding(x.rank()), "}}");
    lines_.push_back(absl::StrCat("  %", w, " = ", ts, " while(%", init, "), condition=%", cond,
                                  ", body=%", body, wsh));
    Emit("wres", x.type, x.dims, absl::StrCat("get-tuple-element(%", w, "), index=1"));
  }

  void Call() {
    Value a = PickAny();
    Value b = Need(a.type, a.dims);
    const std::string s = ShapeText(a);
    if (kGenerateSharedCallees && callees_.contains(s) && Chance(0.6)) {
      Emit("call", a.type, a.dims,
           absl::StrCat("call(%", a.name, ", %", b.name, "), to_apply=%", callees_[s]));
      return;
    }
    std::string callee = Fresh("callee"), pa = Fresh("ca"), pb = Fresh("cb"), m = Fresh("cm"),
                r = Fresh("cr");
    static const char* ops[] = {"add", "subtract", "maximum"};
    computations_.push_back(absl::StrCat(
        "%", callee, " (", pa, ": ", s, ", ", pb, ": ", s, ") -> ", s, " {\n", "  %", pa, " = ", s,
        " parameter(0)\n", "  %", pb, " = ", s, " parameter(1)\n", "  %", m, " = ", s, " multiply(%",
        pa, ", %", pb, ")\n", "  ROOT %", r, " = ", s, " ", ops[Uniform(0, 2)], "(%", m, ", %", pa,
        ")\n}\n"));
    callees_[s] = callee;
    Emit("call", a.type, a.dims, absl::StrCat("call(%", a.name, ", %", b.name, "), to_apply=%", callee));
  }

  void Conditional() {
    Value x = PickAny();
    const std::string s = ShapeText(x);
    // A data-dependent predicate: sum(x) > 0 (or a constant one).
    std::string pred = Fresh("pred");
    if (Chance(0.7)) {
      std::vector<int64_t> all(static_cast<size_t>(x.rank()));
      std::iota(all.begin(), all.end(), 0);
      std::string z = ConstantScalar(x.type, 0);
      std::string sum = Fresh("csum");
      lines_.push_back(absl::StrCat("  %", sum, " = ", x.type, "[] reduce(%", x.name, ", %", z,
                                    "), dimensions={", absl::StrJoin(all, ","), "}, to_apply=%add_",
                                    x.type));
      lines_.push_back(absl::StrCat("  %", pred, " = pred[] compare(%", sum, ", %", z,
                                    "), direction=GT"));
    } else {
      lines_.push_back(absl::StrCat("  %", pred, " = pred[] constant(", Chance(0.5) ? "true" : "false", ")"));
    }
    std::string branches[2];
    for (std::string& br : branches) {
      auto& known = branches_[s];
      if (kGenerateSharedCallees && !known.empty() && Chance(0.6)) {
        br = known[static_cast<size_t>(Uniform(0, static_cast<int>(known.size()) - 1))];
        continue;
      }
      br = Fresh("branch");
      known.push_back(br);
      std::string p = Fresh("bp"), y;
      std::vector<std::string> ops = ElementwiseBody(p, x, &y);
      computations_.push_back(absl::StrCat("%", br, " (", p, ": ", s, ") -> ", s, " {\n", "  %", p,
                                           " = ", s, " parameter(0)\n", absl::StrJoin(ops, "\n"),
                                           "\n  ROOT %", Fresh("ret"), " = ", s, " copy(%", y,
                                           ")\n}\n"));
    }
    Emit("cond", x.type, x.dims,
         absl::StrCat("conditional(%", pred, ", %", x.name, ", %", x.name, "), true_computation=%",
                      branches[0], ", false_computation=%", branches[1]));
  }

  // A manual region as shard_map writes it: a Sharding constraint,
  // SPMDFullToShardShape into {manual} (every mesh axis) or a partially
  // manual sharding (last_tile_dims={manual, replicated}: one factor of the
  // devices manual, the rest replicated inside the region), one or two
  // elementwise ops on each device's shard, SPMDShardToFullShape back. The
  // split dims divide evenly. The reference program computes the same ops
  // on the global value in their place.
  void ManualRegion() {
    Value a = Pick(1, 3);
    if (mesh_.devices == 1) return Unary();
    // The manual factor: all devices, or (partially manual) a proper factor.
    int64_t manual = mesh_.devices, replicated = 1;
    if (mesh_.devices >= 4 && Chance(0.5)) {
      manual = Chance(0.5) ? 2 : mesh_.devices / 2;
      replicated = mesh_.devices / manual;
    }
    const int64_t d = Uniform(0, static_cast<int>(a.rank()) - 1);
    if (a.dims[static_cast<size_t>(d)] % manual != 0) {
      std::vector<int64_t> dims = a.dims;
      dims[static_cast<size_t>(d)] = manual * Uniform(1, 2);
      a = NewParameter(a.type, dims);
    }
    std::vector<int64_t> devices = mesh_devices_;
    if (Chance(0.2)) std::shuffle(devices.begin(), devices.end(), rng_);
    std::vector<int64_t> tiles(static_cast<size_t>(a.rank()), 1);
    tiles[static_cast<size_t>(d)] = manual;
    std::vector<int64_t> local = a.dims;
    local[static_cast<size_t>(d)] /= manual;
    const std::string list = DeviceList(devices);
    std::string full, inside;
    if (replicated == 1) {
      full = absl::StrCat("devices=[", absl::StrJoin(tiles, ","), "]", list);
      inside = "manual";
    } else {
      full = absl::StrCat("devices=[", absl::StrJoin(tiles, ","), ",", replicated, "]", list,
                          " last_tile_dim_replicate");
      std::vector<int64_t> ones(static_cast<size_t>(a.rank()), 1);
      inside = absl::StrCat("devices=[", absl::StrJoin(ones, ","), ",", manual, ",", replicated, "]",
                            list, " last_tile_dims={manual, replicated}");
    }
    const std::string global_shape = ShapeText(a.type, a.dims), local_shape = ShapeText(a.type, local);
    auto line = [&](const std::string& name, const std::string& program, const std::string& reference) {
      if (!reference.empty()) reference_overrides_[lines_.size()] = absl::StrCat("  %", name, " = ", reference);
      lines_.push_back(absl::StrCat("  %", name, " = ", program));
    };
    const std::string constrained = Fresh("constrained"), shard = Fresh("shard");
    line(constrained, absl::StrCat(global_shape, " custom-call(%", a.name,
                                   "), custom_call_target=\"Sharding\", sharding={", full, "}"), "");
    line(shard, absl::StrCat(local_shape, " custom-call(%", constrained,
                             "), custom_call_target=\"SPMDFullToShardShape\", sharding={", inside, "}"),
         absl::StrCat(global_shape, " copy(%", constrained, ")"));
    // A partially manual region may split a data dim among the devices of
    // each manual group (they reshard within the group); its last op
    // gathers it again, as SPMDShardToFullShape takes each device's value.
    std::string inner = inside;
    if (replicated > 1 && Chance(0.5)) {
      const int64_t e = Uniform(0, static_cast<int>(a.rank()) - 1);
      const int64_t k = 2;
      if (local[static_cast<size_t>(e)] % k == 0 && replicated % k == 0) {
        std::vector<int64_t> split(static_cast<size_t>(a.rank()), 1);
        split[static_cast<size_t>(e)] = k;
        // Device (i along e, group g, r) is the r-th of the group's
        // i-th slice: the groups stay those of `inside`.
        std::vector<int64_t> order;
        const int64_t rest = replicated / k;
        for (int64_t i = 0; i < k; ++i)
          for (int64_t g = 0; g < manual; ++g)
            for (int64_t r = 0; r < rest; ++r) order.push_back(devices[g * replicated + i * rest + r]);
        inner = absl::StrCat("devices=[", absl::StrJoin(split, ","), ",", manual, ",", rest, "]",
                             absl::StrJoin(order, ","), " last_tile_dims={manual, replicated}");
      }
    }
    std::string x = shard;
    const int ops = Uniform(1, 2);
    for (int i = 0; i < ops; ++i) {
      static const char* unary[] = {"negate", "abs", "copy"};
      static const char* binary[] = {"add", "multiply", "maximum"};
      const std::string y = Fresh("inside");
      const std::string op = Chance(0.5) ? absl::StrCat(unary[Uniform(0, 2)], "(%", x, ")")
                                         : absl::StrCat(binary[Uniform(0, 2)], "(%", x, ", %", x, ")");
      line(y, absl::StrCat(local_shape, " ", op, ", sharding={", inner, "}"),
           absl::StrCat(global_shape, " ", op));
      x = y;
    }
    if (inner != inside) {
      const std::string y = Fresh("inside");
      line(y, absl::StrCat(local_shape, " copy(%", x, "), sharding={", inside, "}"),
           absl::StrCat(global_shape, " copy(%", x, ")"));
      x = y;
    }
    Value out{Fresh("unshard"), a.type, a.dims};
    line(out.name, absl::StrCat(global_shape, " custom-call(%", x,
                                "), custom_call_target=\"SPMDShardToFullShape\", sharding={", full, "}"),
         absl::StrCat(global_shape, " copy(%", x, ")"));
    pool_.push_back(out);
  }

  std::mt19937 rng_;
  Mesh mesh_;
  std::vector<int64_t> mesh_devices_;
  std::vector<std::string> params_, lines_, computations_;
  std::set<std::string> argmax_types_;
  std::string root_;
  // Lines of manual regions as the reference program spells them (by index
  // into lines_).
  std::map<size_t, std::string> reference_overrides_;
  std::vector<Value> pool_;
  // Called computations by signature, for sharing.
  std::map<std::string, std::string> callees_;
  std::map<std::string, std::vector<std::string>> branches_;
  int next_ = 0;
};

Mesh RandomMesh(std::mt19937& rng) {
  static const std::vector<std::vector<int64_t>> layouts = {
      {1}, {2}, {4}, {2, 2}, {8}, {2, 4}, {4, 2}, {8}, {2, 4}, {4, 2}, {4}, {2, 2}};
  const auto& axes = layouts[std::uniform_int_distribution<size_t>(0, layouts.size() - 1)(rng)];
  Mesh m;
  m.axes = axes;
  m.devices = 1;
  for (int64_t a : axes) m.devices *= a;
  return m;
}

struct CaseOutcome {
  std::string stage;  // "" when the case passed
  std::string message;
  std::string report;  // everything needed to reproduce
  // Coverage: opcodes of the global module and of the partitioned one.
  std::map<std::string, int> global_ops, local_ops;
};

// Runs one case: generated from its index, or `file_text` if given.
CaseOutcome RunCase(int index, const std::string& file_text = "") {
  const uint32_t seed = kBaseSeed + static_cast<uint32_t>(index);
  std::mt19937 mesh_rng(seed ^ 0x9e3779b9u);
  const Mesh mesh = RandomMesh(mesh_rng);
  ProgramGenerator gen(seed, mesh);
  const std::string text = file_text.empty() ? gen.Generate() : file_text;
  const std::string reference_text = file_text.empty() ? gen.Reference() : "";
  CaseOutcome out;
  std::string header = file_text.empty()
                           ? absl::StrCat("case ", index, " (seed ", seed, ", mesh ", mesh.ToString(), ")")
                           : absl::StrCat("module from file (seed ", seed, ")");
  auto fail = [&](std::string stage, std::string message, const std::string& propagated,
                  const std::string& partitioned) {
    out.stage = std::move(stage);
    out.message = std::move(message);
    out.report = absl::StrCat("// ", header, ": ", out.stage, ": ", out.message,
                              "\n// ---- generated module ----\n", text,
                              reference_text.empty() ? "" : "\n// ---- reference module ----\n",
                              reference_text);
    if (!propagated.empty())
      absl::StrAppend(&out.report, "\n// ---- after propagation (shardings) ----\n", propagated);
    if (!partitioned.empty())
      absl::StrAppend(&out.report, "\n// ---- partitioned ----\n", partitioned);
    return out;
  };
  // Leave the case on disk first: a crash in the partitioner names it.
  fs::create_directories("/tmp/sharc_partition_failures");
  {
    std::ofstream f("/tmp/sharc_partition_failures/current.hlo");
    f << "// " << header << "\n" << text;
  }
  auto parsed = hlo::ParseAndVerifyModule(text);
  if (!parsed.ok()) return fail("generator (parse/verify)", std::string(parsed.status().message()), "", "");
  std::unique_ptr<hlo::Module> global = *std::move(parsed);
  auto prop = PropagateShardings(*global);
  if (!prop.ok()) return fail("propagation", std::string(prop.status().message()), "", "");
  const std::string propagated = global->ToString();
  std::unique_ptr<hlo::Module> reference;
  if (!reference_text.empty()) {
    auto ref = hlo::ParseAndVerifyModule(reference_text);
    if (!ref.ok()) return fail("generator (reference)", std::string(ref.status().message()), "", "");
    reference = *std::move(ref);
  }
  if (absl::Status st = hlo::VerifyModule(*global); !st.ok())
    return fail("verify after propagation", std::string(st.message()), propagated, "");
  // The first two passes on their own: the explicit global module verifies
  // and computes the same values.
  auto explicit_module = InsertReshards(*global);
  if (!explicit_module.ok())
    return fail("insert-reshards", std::string(explicit_module.status().message()), propagated, "");
  if (absl::Status st = ReshardToCollectives(**explicit_module); !st.ok())
    return fail("reshard-to-collectives", std::string(st.message()), propagated, "");
  if (absl::Status st = hlo::VerifyModule(**explicit_module); !st.ok())
    return fail("verify explicit", std::string(st.message()), propagated, (*explicit_module)->ToString());
  // (A manual region has no global values to compare the explicit module's
  // with: the interpreter cannot run it before localize.)
  if (reference == nullptr) {
    std::mt19937 rng(seed);
    std::vector<hlo::Literal> args;
    for (const hlo::Instruction* p : global->entry()->parameters())
      args.push_back(testing_util::RandomLiteral(p->shape(), rng));
    auto want = hlo::Evaluate(*global, args);
    auto got = hlo::Evaluate(**explicit_module, args);
    absl::Status st = !want.ok()  ? want.status()
                      : !got.ok() ? got.status()
                                  : testing_util::CompareLiterals(*want, *got, "explicit module");
    if (!st.ok()) return fail("explicit module values", std::string(st.message()), propagated,
                              (*explicit_module)->ToString());
  }
  auto local = PartitionModule(*global);
  if (!local.ok()) return fail("partition", std::string(local.status().message()), propagated, "");
  const std::string partitioned = (*local)->ToString();
  if (absl::Status st = hlo::VerifyModule(**local); !st.ok())
    return fail("verify partitioned", std::string(st.message()), propagated, partitioned);
  absl::Status st = testing_util::ExpectPartitionedMatchesGlobal(*global, **local, seed,
                                                                 absl::Seconds(10), reference.get());
  if (!st.ok()) return fail("run/compare", std::string(st.message()), propagated, partitioned);
  for (const hlo::Computation* c : global->computations())
    for (const hlo::Instruction* i : c->instructions()) ++out.global_ops[std::string(hlo::OpcodeName(i->opcode()))];
  for (const hlo::Computation* c : (*local)->computations())
    for (const hlo::Instruction* i : c->instructions()) ++out.local_ops[std::string(hlo::OpcodeName(i->opcode()))];
  return out;
}

// Minimised modules of bugs this test found (tests/partition/regressions/:
// whole-dim slices on split dims, partly covered dynamic-update-slice dims,
// pads that shift data, callees shared by differently sharded sites, scatters
// into split indexed dims, gathers split along whole indexed slices) run
// through the same pipeline. SHARC_RANDOM_PARTITION_FILE=path runs one other
// hand-written module instead.
TEST(PartitionRandomTest, RegressionModules) {
  std::vector<std::string> paths;
  if (const char* path = std::getenv("SHARC_RANDOM_PARTITION_FILE"); path && *path) {
    paths.push_back(path);
  } else {
    for (const auto& entry :
         fs::directory_iterator(fs::path(SHARC_SOURCE_DIR) / "tests/partition/regressions")) {
      if (entry.path().extension() == ".hlo") paths.push_back(entry.path().string());
    }
    std::sort(paths.begin(), paths.end());
  }
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    CaseOutcome o = RunCase(EnvInt("SHARC_RANDOM_PARTITION_SEED", 0), ss.str());
    EXPECT_TRUE(o.stage.empty()) << path << "\n" << o.report;
  }
}

TEST(PartitionRandomTest, PartitionedMatchesGlobal) {
  const int only = EnvInt("SHARC_RANDOM_PARTITION_CASE", -1);
  const int count = EnvInt("SHARC_RANDOM_PARTITION_CASES", 2000);
  const int print_max = EnvInt("SHARC_RANDOM_PARTITION_PRINT", 10);
  const fs::path dir = "/tmp/sharc_partition_failures";
  fs::create_directories(dir);
  int failures = 0, printed = 0, ran = 0;
  std::map<std::string, int> by_stage;
  std::vector<std::string> summary;
  // Coverage of passing cases: in how many each op appears.
  std::map<std::string, int> global_cases, local_cases;
  for (int i = (only >= 0 ? only : 0); i < (only >= 0 ? only + 1 : count); ++i) {
    CaseOutcome o = RunCase(i);
    ++ran;
    for (const auto& [op, n] : o.global_ops) ++global_cases[op];
    for (const auto& [op, n] : o.local_ops) ++local_cases[op];
    if (o.stage.empty()) continue;
    ++failures;
    ++by_stage[o.stage];
    std::ofstream(dir / absl::StrCat("case_", i, ".hlo")) << o.report;
    summary.push_back(absl::StrCat("case ", i, ": ", o.stage, ": ", o.message.substr(0, 200)));
    if (printed < print_max) {
      ++printed;
      ADD_FAILURE() << o.report;
    }
  }
  fs::remove(dir / "current.hlo");
  std::string coverage = "cases (passing) using each op, global program:";
  for (const auto& [op, n] : global_cases) absl::StrAppend(&coverage, " ", op, "=", n);
  absl::StrAppend(&coverage, "\npartitioned program:");
  for (const auto& [op, n] : local_cases) absl::StrAppend(&coverage, " ", op, "=", n);
  std::cout << ran - failures << " of " << ran << " cases pass\n" << coverage << "\n";
  std::string stages;
  for (const auto& [stage, n] : by_stage) absl::StrAppend(&stages, "  ", stage, ": ", n, "\n");
  EXPECT_EQ(failures, 0) << failures << " of " << ran << " random cases failed (written to " << dir
                         << "/case_N.hlo; rerun one with SHARC_RANDOM_PARTITION_CASE=N):\n"
                         << stages << absl::StrJoin(summary, "\n");
}

}  // namespace
}  // namespace sharc::spmd
