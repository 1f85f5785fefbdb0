// Partitioner pass 1 of 3 (spmd/partition/partitioner.h): decides how each
// instruction of a propagated global module is split (its factor rule, via
// spmd/partition/strategy.h) and makes every change of sharding explicit.
// Afterwards, in the returned global module:
//   - every instruction has a sharding: the layout its per-device op
//     produces (for a split reduction, the layout of the partial results);
//   - every operand already has the layout its user's per-device op
//     consumes; where it did not, a kSpmdReshard sits in between;
//   - split reductions are followed by kSpmdAllReduce (or kSpmdReduceScatter
//     when the instruction's own sharding splits the reduced groups' dim),
//     with their replica groups;
//   - where an instruction's own sharding differs from what its op
//     produces, a kSpmdReshard named like the instruction follows it (the op
//     becomes NAME.local, or NAME.partial before a reduction);
//   - control-flow bodies are copied once per sharding they are used with,
//     their parameters carrying that sharding;
//   - "Sharding" custom-calls are gone (a reshard, or nothing).
// Shapes stay global, and the module still interprets to the same values.
//
// Before (a transpose whose result is wanted split like its operand):
//   %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
//   ROOT %t = f32[4,8] transpose(%x), dimensions={1,0}, sharding={devices=[2,1]0,1}
// After (the op splits its output's dim 1; the reshard moves the split):
//   %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
//   %t.local = f32[4,8] transpose(%x), dimensions={1,0}, sharding={devices=[1,2]0,1}
//   ROOT %t = f32[4,8] custom-call(%t.local), custom_call_target="SpmdReshard",
//                                             sharding={devices=[2,1]0,1}
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

// For `sharc partition --explain NAME`: what the strategy choice
// (strategy.h) weighed for the instructions named `name` (one account per
// copy, as a body used with several shardings is rewritten once per set).
struct StrategyLog {
  std::string name;
  std::vector<std::string> accounts;
};

struct InsertReshardsOptions {
  // Slice, pad and reverse along a split dim fetch only the window each
  // device needs with collective-permutes (halo.h) when that sends fewer
  // bytes than the best plan that keeps the dim whole. On by default, as in
  // GSPMD.
  bool halo_exchange = true;
  StrategyLog* log = nullptr;
};

absl::StatusOr<std::unique_ptr<hlo::Module>> InsertReshards(
    const hlo::Module& global, const InsertReshardsOptions& options = {});

}  // namespace sharc::spmd
