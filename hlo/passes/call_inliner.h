// Call inlining (XLA's CallInliner): a `call` becomes its callee's body,
// copied into the caller with the call's operands in place of the
// parameters; callees nothing calls any more go.
//
//   before:                                   after:
//     %double (p: f32[4]) -> f32[4] {           ENTRY %main {
//       %p = f32[4] parameter(0)                  %a = f32[4] parameter(0)
//       ROOT %d = f32[4] add(%p, %p)              ROOT %d = f32[4] add(%a, %a)
//     }                                         }
//     ENTRY %main {
//       %a = f32[4] parameter(0)
//       ROOT %c = f32[4] call(%a), to_apply=%double
//     }
//
// Copies keep their callee's names when the caller has no such name, else
// take the first free NAME.N. Left as calls: a call that carries a sharding
// or a backend config (a fused kernel), a callee whose parameters carry a
// sharding (each is an annotation on the call's operand that inlining
// would lose), and calls the MapReduce lowering makes later in the
// pipeline (this pass runs before it).
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pass.h"

namespace sharc::hlo {

// Inlines one call, whatever the pass would decide for it: the callee's body
// is copied in front of `call` (its names kept where free), which goes.
void InlineCallSite(Computation& caller, Instruction* call);

class CallInliner final : public Pass {
 public:
  std::string_view name() const override { return "inline"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace sharc::hlo
