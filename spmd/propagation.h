// Sharding propagation (GSPMD semantics): infers a sharding for every value
// of a module from the few its author annotated, so that a module annotated
// for XLA gets the same shardings here.
//
// Before:                                   After:
//   %p0 = f32[8,8] parameter(0),              %p0 = ... sharding={devices=[2,1]0,1}
//           sharding={devices=[2,1]0,1}       %e = f32[8,8] exponential(%p0),
//   %e = f32[8,8] exponential(%p0)                    sharding={devices=[2,1]0,1}
//
// The per-op knowledge comes from the factor rules (spmd/sharding_rule.h);
// this pass adds GSPMD's policy: op priorities (the "aggressiveness" levels
// 0..3: pass-through ops first, then dot/reduce/pad/slice, broadcasts last),
// when a candidate sharding replaces the current one, merging of compatible
// partial shardings, shard_as groups, control-flow edges and the end-of-pass
// rules. Details are in docs/propagation.md.
#pragma once

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

struct PropagationOptions {
  // Overrides the module header's allow_spmd_sharding_propagation_to_output /
  // _to_parameters when set (one entry, or one per root tuple element /
  // parameter).
  std::optional<std::vector<bool>> allow_propagation_to_output;
  std::optional<std::vector<bool>> allow_propagation_to_parameters;
};

// Why an instruction has its sharding: the step that last set it.
struct ShardingProvenance {
  std::string from;        // instruction the sharding came from ("" for an annotation)
  std::string how;         // e.g. "annotation", "forward through dot", "shard_as group 0"
  int aggressiveness = -1;
};

struct PropagationResult {
  bool changed = false;
  // Keyed by instruction name (within its computation: "comp/name").
  absl::flat_hash_map<std::string, ShardingProvenance> provenance;
};

// Runs propagation in place. Errors (InvalidArgument) for annotations that
// do not fit their value's shape or the module's device count, naming the
// instruction.
absl::StatusOr<PropagationResult> PropagateShardings(hlo::Module& module,
                                                     const PropagationOptions& options = {});

// Where `name`'s sharding came from, as data: the chain of propagation
// steps from `name` back to an annotation.
struct ShardingExplanation {
  struct Step {
    std::string value;        // "computation/instruction"
    std::string how;          // ShardingProvenance::how; "" when no step set it
    int aggressiveness = -1;
    std::string from;         // the next value in the chain ("" ends it)
  };
  std::string name;
  std::string sharding;       // the sharding's text, "" for none
  std::vector<Step> steps;
};
absl::StatusOr<ShardingExplanation> ExplainShardingSteps(const hlo::Module& module,
                                                         const PropagationResult& result,
                                                         const std::string& name);

// The same account as text ("sharc propagate --explain").
absl::StatusOr<std::string> ExplainSharding(const hlo::Module& module,
                                            const PropagationResult& result,
                                            const std::string& name);

}  // namespace sharc::spmd
