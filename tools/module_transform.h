// What `sharc grad`, `jvp` and `transpose` share: load FILE, give its
// shard_map bodies their variance types (implicit casts become explicit
// pbroadcasts, which the transposes read), apply a module-to-module
// transform, type the new bodies too, and print the result.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "hlo/ir/module.h"

namespace sharc::tools {

using ModuleTransform =
    std::function<absl::StatusOr<std::unique_ptr<hlo::Module>>(const hlo::Module&)>;

// Types `module`'s shard_map bodies, applies `transform` and types the new
// module's bodies too (what the commands print, and what the Python
// package's Module.grad/jvp/transpose return).
absl::StatusOr<std::unique_ptr<hlo::Module>> ApplyTypedTransform(const hlo::Module& module,
                                                                 const ModuleTransform& transform);

// Returns the command's exit code; errors go to `err` as FILE: error: ...
int PrintTransformedModule(const std::string& path, const ModuleTransform& transform,
                           std::ostream& out, std::ostream& err);

}  // namespace sharc::tools
