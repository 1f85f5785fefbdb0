// Lowers the MapReduce blocks (hlo/ops/mapreduce_ops.cc) to ordinary ops so
// that propagation and the partitioner can work on them: broadcast becomes a
// broadcast, map a call of f vectorised over the groups (hlo::Vmap), sum and
// mean a reduce over the leading dimension.
//
// Three modes, as the DrJAX/FAX papers compare them:
//   annotated  DrJAX's internal sharding constraints: broadcast results and
//              map inputs and outputs get P(placement, UNCONSTRAINED...), and
//              constraints inside f get the placement axis prefixed.
//   ns         no internal constraints ("NS"): propagation decides alone.
//   loop       map as an unrolled loop over the groups (the naive baseline),
//              no internal constraints.
//
// Before (mesh={clients=2}):
//   %b = f32[2,3] mapreduce.broadcast(%x), placement=clients
//   ROOT %s = f32[3] mapreduce.sum(%b), placement=clients
// After (annotated):
//   %b.broadcast = f32[2,3] broadcast(%x), dimensions={1}
//   %b = f32[2,3] custom-call(%b.broadcast), custom_call_target="Sharding",
//          backend_config="unspecified_dims=[1]", sharding={devices=[2,1]0,1}
//   %s.zero = f32[] constant(0)
//   ROOT %s = f32[3] reduce(%b, %s.zero), dimensions={0}, to_apply=%sharc.add.f32
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

enum class MapReduceMode { kAnnotated, kNoSharding, kLoop };

// "annotated", "ns" or "loop".
absl::StatusOr<MapReduceMode> ParseMapReduceMode(std::string_view text);
std::string MapReduceModeName(MapReduceMode mode);

bool HasMapReduceBlocks(const hlo::Module& module);

// Every placement used by the module's blocks and its number of groups.
// Checks that each placement has one group count, that blocks do not nest
// inside map bodies, and that a placement naming a mesh axis (of the header's
// mesh) has a group count that axis divides. In annotated mode on more than
// one device a placement must name a mesh axis (with no mesh declared, a
// single placement is taken to span all devices).
absl::StatusOr<std::map<std::string, int64_t>> CheckPlacements(const hlo::Module& module,
                                                               MapReduceMode mode);

// Replaces every block in `module` (a no-op without blocks). The lowered
// value keeps the block's instruction name.
absl::Status LowerMapReduce(hlo::Module& module, MapReduceMode mode);

}  // namespace sharc::spmd
