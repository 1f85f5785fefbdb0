// The SPMD partitioner: turns a global module whose values carry shardings
// into the one per-device program every device runs, with the collectives
// that make it compute the global program. It is a short pipeline of
// passes, each a module -> module rewrite tested on its own:
//   1. InsertReshards (insert_reshards.h): choose how to split each op from
//      its factor rule (strategy.h) and make every change of sharding an
//      explicit global-view reshard; split reductions get an explicit
//      all-reduce or reduce-scatter;
//   2. ReshardToCollectives (reshard_to_collectives.h): each reshard becomes
//      global-view all-gather / all-slice / all-to-all / collective-permute
//      steps (reshard.h plans them);
//   3. Localize (localize.h): global shapes become per-device shapes and the
//      global-view steps per-device collectives; padding is masked.
// Then instructions nothing uses are dropped. Between passes the module is
// still a global program with the same values (the global-view ops are the
// identity on global values), so `sharc partition --stop-after` can print
// it and the interpreter can run it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

struct PartitionOptions {
  // Devices to partition for; 0 = the module's num_partitions.
  int64_t num_devices = 0;
  // What to do with instructions that have no sharding: treat them as
  // replicated (XLA's behaviour after propagation), or refuse.
  enum class Unsharded { kReplicate, kError } unsharded = Unsharded::kReplicate;
  // The last pass to run (the module after it is returned).
  enum class Stage { kInsertReshards, kReshardToCollectives, kLocalize } stop_after = Stage::kLocalize;
  // Slice, pad and reverse along a split dim exchange halos with
  // collective-permutes instead of gathering the dim, when that sends fewer
  // bytes (spmd/partition/halo.h). On by default, as in XLA.
  bool halo_exchange = true;
  // A dot whose operand of at least this many MiB is all-gathered along a
  // free dim runs as a windowed einsum (spmd/partition/windowed_einsum.h):
  // XLA's threshold_for_windowed_einsum_mib, 256 by default. Negative: off.
  int64_t windowed_einsum_threshold_mib = 256;
};

// Pass names as the CLI spells them: insert-reshards, reshard-to-collectives,
// localize.
absl::StatusOr<PartitionOptions::Stage> ParsePartitionStage(std::string_view name);

absl::StatusOr<std::unique_ptr<hlo::Module>> PartitionModule(const hlo::Module& global,
                                                             const PartitionOptions& options = {});

// `sharc partition --explain NAME`: which plans the partitioner considered
// for the instruction named `name` (each an iteration sharding of the op's
// factors), what each would send per device (operand reshards step by step,
// the completion of split reductions, the result's reshard), and why the
// chosen one won. An instruction with no choice (no factor rule, a manual
// region, control flow) says how it is partitioned instead.
absl::StatusOr<std::string> ExplainPartitionChoice(const hlo::Module& global, std::string_view name,
                                                   const PartitionOptions& options = {});

}  // namespace sharc::spmd
