// XLA's `frontend_attributes={key="value", ...}`: string attributes that
// frontends attach to a module or an instruction (JAX's Shardy shardings
// travel in them). sharc keeps the text verbatim; this reads it.
//
//   {xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>",inlineable="false"}
//     -> [("xla.sdy.manual_axes", "#sdy<manual_axes{\"x\"}>"), ("inlineable", "false")]
//   {xla.sdy.meshes={mesh = #sdy.mesh<["x"=8]>}}   (a value XLA prints raw, as it
//     reads as a braced dictionary)  ->  [("xla.sdy.meshes", "{mesh = #sdy.mesh<[\"x\"=8]>}")]
//
// Quoted values come back with their escapes resolved, braced ones as written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace sharc::hlo {

using FrontendAttributes = std::vector<std::pair<std::string, std::string>>;

// `text` is the attribute as written, with or without its outer braces.
absl::StatusOr<FrontendAttributes> ParseFrontendAttributes(std::string_view text);

// The value of `key`, if present.
std::optional<std::string> FindFrontendAttribute(const FrontendAttributes& attributes,
                                                 std::string_view key);

}  // namespace sharc::hlo
