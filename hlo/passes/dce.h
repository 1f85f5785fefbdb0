// Dead-code elimination: removes the instructions nothing uses, users
// before producers, so chains of dead values go at once. Parameters and
// roots always stay; which other unused instructions may go is the
// caller's choice, because the partitioner and autodiff differ on it.
//
//   before:                               after:
//     %a = f32[4] parameter(0)              %a = f32[4] parameter(0)
//     %dead = f32[4] negate(%a)             ROOT %r = f32[4] abs(%a)
//     %dead2 = f32[4] abs(%dead)
//     ROOT %r = f32[4] abs(%a)
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pass.h"

namespace sharc::hlo {

struct DceOptions {
  enum class Keep {
    // Only side effects stay (side-effecting ops and custom calls marked
    // custom_call_has_side_effect: an outfeed, a send, an infeed that pops
    // a value, as XLA's DCE keeps them); unused collectives go: the
    // partitioner's per-device program, whose collectives exist only to
    // feed values (an unused one has no reader on any device).
    kEffectsButNotCollectives,
    // Side-effecting ops, collectives and custom calls marked
    // custom_call_has_side_effect stay (autodiff's clean-up).
    kEffects,
    // As kEffects, but named collectives may go: inside a shard_map body
    // every device drops the same ones (autodiff's shard_map pruning).
    kEffectsExceptNamedCollectives,
  };
  Keep keep = Keep::kEffects;
};

// Removes `computation`'s dead instructions; true if any went.
bool RemoveDeadInstructions(Computation& computation, const DceOptions& options = {});

// The pass: dead-code elimination in every computation of the module.
class DeadCodeElimination final : public Pass {
 public:
  explicit DeadCodeElimination(DceOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  DceOptions options_;
};

}  // namespace sharc::hlo
