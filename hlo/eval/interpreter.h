// The reference interpreter: evaluates a module with each op's OpDef::evaluate.
// It is the oracle every later stage is tested against, so it favours obvious
// correctness over speed.
//
// SPMD mode runs a per-device module on N simulated devices (one thread each)
// and implements collectives and partition-id by rendezvous between them.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "hlo/eval/host_queues.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

// Evaluates the entry computation of `module` on `args` (one per entry
// parameter). The module is expected to be verified. Its infeeds pop from
// and its outfeeds push to `host_queues` (an infeed or outfeed without
// them is an error).
absl::StatusOr<Literal> Evaluate(const Module& module, const std::vector<Literal>& args,
                                 HostQueues* host_queues = nullptr);

struct SpmdOptions {
  int64_t num_devices = 1;
  // A collective whose peers do not all arrive within this time fails.
  absl::Duration collective_timeout = absl::Seconds(60);
  // Device d's host queues are host_queues[d] (none if empty).
  std::vector<HostQueues*> host_queues;
};

// Runs `module` on `options.num_devices` simulated devices; `args[d]` holds
// device d's entry arguments. Returns each device's result.
absl::StatusOr<std::vector<Literal>> EvaluateSpmd(const Module& module,
                                                  const std::vector<std::vector<Literal>>& args,
                                                  const SpmdOptions& options);

// The same for one computation: device d runs `computation` on `args[d]`
// and sees partition id d; collectives meet among these runs only. The
// reference semantics of shard_map runs its body this way.
absl::StatusOr<std::vector<Literal>> EvaluateComputationSpmd(
    const Computation& computation, const std::vector<std::vector<Literal>>& args,
    const SpmdOptions& options);

}  // namespace sharc::hlo
