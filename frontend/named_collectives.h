// The named-axis collectives of shard_map bodies (frontend/shard_map.h),
// with JAX's names and arguments. Each names one or several mesh axes
// ("i" or {"i", "j"}); a device's group is the devices that differ from it
// only on those axes. They emit the IR's collectives
// (hlo/ops/named_collective_ops.cc); their device-variance types and
// transposes are the IR's (docs/shard_map.md). Used outside a shard_map
// body they are a TraceError at the user's line.
//
//   psum / pmean / pmax / pmin   reduce over the group (varying -> invariant)
//   pbroadcast                   cast invariant -> varying (no communication)
//   all_gather[_invariant]       concatenate the group's blocks
//   psum_scatter                 psum, keep this device's block
//   pscatter                     keep this device's block of an invariant value
//   all_to_all                   exchange blocks: split one dim, concat another
//   ppermute                     send to the pair's destination (zeros if none)
//   axis_index                   this device's position in the group (s32[])
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "frontend/tensor.h"
#include "frontend/trees.h"

namespace sharc::frontend {

// The mesh axes a collective runs over: "i", or {"i", "j"} (their positions
// linearised in the order listed, as JAX's tuple of axis names).
class AxisNames {
 public:
  AxisNames(const char* axis) : names_{axis} {}                 // NOLINT: psum(x, "i")
  AxisNames(std::string axis) : names_{std::move(axis)} {}      // NOLINT
  AxisNames(std::initializer_list<std::string> axes) : names_(axes) {}
  AxisNames(std::vector<std::string> axes) : names_(std::move(axes)) {}  // NOLINT
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string> names_;
};

using Loc = std::source_location;

Tensor psum(const Tensor& x, const AxisNames& axes, Loc loc = Loc::current());
Tree psum(const Tree& x, const AxisNames& axes, Loc loc = Loc::current());
// psum divided by the group size (JAX's pmean).
Tensor pmean(const Tensor& x, const AxisNames& axes, Loc loc = Loc::current());
Tree pmean(const Tree& x, const AxisNames& axes, Loc loc = Loc::current());
Tensor pmax(const Tensor& x, const AxisNames& axes, Loc loc = Loc::current());
Tensor pmin(const Tensor& x, const AxisNames& axes, Loc loc = Loc::current());
// The design note's pbroadcast (JAX's pcast(..., to='varying')).
Tensor pbroadcast(const Tensor& x, const AxisNames& axes, Loc loc = Loc::current());

// Tiled: blocks concatenated along `dimension`; untiled: stacked on a new
// dimension there (JAX's default).
Tensor all_gather(const Tensor& x, const AxisNames& axes, int64_t dimension = 0,
                  bool tiled = false, Loc loc = Loc::current());
// all_gather whose result is the same on every device of the group.
Tensor all_gather_invariant(const Tensor& x, const AxisNames& axes, int64_t dimension = 0,
                            bool tiled = false, Loc loc = Loc::current());
// Tiled: `dimension` divided by the group size; untiled: that dimension must
// be the group size and is removed.
Tensor psum_scatter(const Tensor& x, const AxisNames& axes, int64_t dimension = 0,
                    bool tiled = false, Loc loc = Loc::current());
Tensor pscatter(const Tensor& x, const AxisNames& axes, int64_t dimension = 0,
                bool tiled = false, Loc loc = Loc::current());
Tensor all_to_all(const Tensor& x, const AxisNames& axes, int64_t split_dimension,
                  int64_t concat_dimension, bool tiled = true, Loc loc = Loc::current());
// `pairs`: {source, destination} positions in the group.
Tensor ppermute(const Tensor& x, const AxisNames& axes,
                std::vector<std::pair<int64_t, int64_t>> pairs, Loc loc = Loc::current());
Tensor axis_index(const AxisNames& axes, Loc loc = Loc::current());

// The number of devices in a group over `axes` (JAX's axis_size / psum(1)).
int64_t axis_size(const AxisNames& axes, Loc loc = Loc::current());

}  // namespace sharc::frontend
