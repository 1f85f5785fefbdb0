// Shardy's attribute text, as JAX writes it into HLO frontend attributes
// (hlo/ir/sdy_sharding.h says what it means):
//
//   meshes:          {mesh = #sdy.mesh<["x"=2, "y"=4]>, solo = #sdy.mesh<[], device_ids=[3]>}
//   a sharding:      #sdy.sharding<@mesh, [{"x"}, {"y":(1)2, ?}p1, {}], replicated={"z"}>
//   one per value:   #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>
//   manual axes:     #sdy<manual_axes{"x", "y"}>
//
// A mesh may also be written inline (`<mesh<["x"=2]>, [{"x"}]>`). Errors give
// the character position within the attribute.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/ir/sdy_sharding.h"

namespace sharc::hlo {

absl::StatusOr<std::map<std::string, SdyMesh>> ParseSdyMeshes(std::string_view text);

// A `#sdy.sharding<...>` (one value) or a `#sdy.sharding_per_value<[...]>`.
absl::StatusOr<std::vector<SdyTensorSharding>> ParseSdyShardings(std::string_view text);

absl::StatusOr<std::vector<std::string>> ParseSdyManualAxes(std::string_view text);

}  // namespace sharc::hlo
