// The pass contract (XLA's HloPassInterface, reduced): a pass rewrites a
// module in place and says whether it changed it. Every stage of the
// compile is one (driver/compiler_passes.h lists them in order), so that a
// pipeline (hlo/passes/pipeline.h) can verify, time and dump around any of
// them without knowing what they do.
//
//   class MyPass final : public Pass {
//    public:
//     std::string_view name() const override { return "my-pass"; }
//     absl::StatusOr<bool> Run(Module& module) override;
//   };
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

class Pass {
 public:
  virtual ~Pass() = default;
  // Lower-case words joined by '-', unique within a pipeline: the name
  // --dump-pass-re matches and dump files carry.
  virtual std::string_view name() const = 0;
  // True if the module changed. On error the module may be half rewritten;
  // callers discard it.
  virtual absl::StatusOr<bool> Run(Module& module) = 0;
};

}  // namespace sharc::hlo
