// Partitioner pass 3 of 3 (spmd/partition/partitioner.h): rewrites a global
// module whose changes of sharding are explicit global-view collectives
// (the output of InsertReshards then ReshardToCollectives) into the one
// per-device program every device runs:
//   - each instruction keeps its name and gets the per-device shape of its
//     sharding; entry parameters and results become per-device values
//     (XLA's allow_module_signature_change);
//   - each global-view step becomes per-device collectives with replica
//     groups and channel ids (all-gather, all-to-all, collective-permute,
//     all-reduce, reduce-scatter) or a dynamic-slice at partition-id offsets;
//   - padding of unevenly split dims is masked where it would change a
//     result: the reducer's init value before a reduce, zero before a dot;
//   - a split iota adds this device's offset;
//   - slice, pad, reverse and reduce-window halos (halo.h) and windowed
//     einsums (windowed_einsum.h) become their collective-permutes.
// It does not decide layouts: every layout was chosen by pass 1.
//
// Before (global shapes; the example of insert_reshards.h after pass 2):
//   %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
//   %t.local = f32[4,8] transpose(%x), dimensions={1,0}, sharding={devices=[1,2]0,1}
//   ROOT %t = f32[4,8] custom-call(%t.local), custom_call_target="SpmdAllToAll", ...
// After (what each of the 2 devices runs):
//   %x = f32[4,4] parameter(0)
//   %t.local = f32[4,4] transpose(%x), dimensions={1,0}
//   %reshape.0 = f32[2,2,4] reshape(%t.local)
//   %all-to-all.1 = f32[2,2,4] all-to-all(%reshape.0), channel_id=1,
//                                replica_groups={{0,1}}, dimensions={0}
//   %transpose.2 = f32[2,2,4] transpose(%all-to-all.1), dimensions={1,0,2}
//   ROOT %t = f32[2,8] reshape(%transpose.2)
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "spmd/partition/windowed_einsum.h"

namespace sharc::spmd {

struct LocalizeOptions {
  // A dot whose operand of at least this many bytes (global) is all-gathered
  // along a free dim runs as a windowed einsum (windowed_einsum.h); negative:
  // never. How the gather and the dot are executed is the one choice this
  // pass makes; the layouts are pass 1's.
  int64_t windowed_einsum_threshold_bytes = kDefaultWindowedEinsumThresholdMib * 1024 * 1024;
};

absl::StatusOr<std::unique_ptr<hlo::Module>> Localize(const hlo::Module& explicit_global,
                                                      int64_t num_devices,
                                                      const LocalizeOptions& options = {});

}  // namespace sharc::spmd
