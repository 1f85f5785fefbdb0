// --check's reference for a program with manual regions.
//
// Between SPMDFullToShardShape and SPMDShardToFullShape each device (or
// manual group) holds values of its own, so the one-device global run is no
// reference: it would take the tile at offset 0. The per-device reference
// is the program with only its manual regions kept, partitioned and run on
// the reference interpreter's kernels:
//
//   - every value outside the regions is replicated, except at the region's
//     boundaries: the operand of SPMDFullToShardShape keeps the layout whose
//     tiles become the devices' values, the operand of SPMDShardToFullShape
//     the layout whose tiles they are, and the markers keep theirs;
//   - inside a partially manual region, the data dims the program splits
//     are replicated within each manual group; manual dims stay, and so
//     does a collective's layout (its pairs and groups name devices, so
//     which tile each device holds is part of its meaning).
//
// before:  %c = f32[8,2] copy(%x), sharding={devices=[2,2]<=[4]}
//          %a = f32[8,2] add(%c, %c), sharding={devices=[4,1]<=[4]}
//          %m = f32[4,2] custom-call(%a), custom_call_target="SPMDFullToShardShape",
//               sharding={manual}
// after:   %c ... sharding={replicated}
//          %a ... sharding={devices=[4,1]<=[4]}        (the region's entry)
//          %m ... sharding={manual}
//
// What it checks: the automatic partitioning around and inside the regions
// (resharding, splitting, collectives), and the compiled kernels. The
// region boundaries themselves are partitioned alike in both runs; their
// own tests (tests/partition, tests/lit/partition_manual_and_rng.hlo)
// check them.
#pragma once

#include <memory>

#include "hlo/ir/module.h"

namespace sharc::tools {

// True if `module` enters a manual region through SPMDFullToShardShape
// with a change of shape (per-device values with no global meaning).
bool HasManualRegions(const hlo::Module& module);

// The per-device reference of `module` (above). Parameters and results
// that are manual already keep their sharding, so the runtime hands them
// in and out alike in both runs.
std::unique_ptr<hlo::Module> PerDeviceReference(const hlo::Module& module);

}  // namespace sharc::tools
