#include "driver/sharding_text.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "spmd/mesh.h"

namespace sharc::driver {
namespace {

absl::string_view ToAbsl(std::string_view text) { return {text.data(), text.size()}; }

// A partition spec is resolved against the mesh the module's header names.
absl::StatusOr<hlo::Sharding> ShardingFromSpec(absl::string_view text, const hlo::Module& module,
                                               const hlo::Shape& shape, const std::string& what) {
  if (module.config().mesh.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": partition spec ", text,
        " needs a named mesh, and the module has none (give the module a mesh first, or write "
        "the sharding as HLO text such as {devices=[2,1]0,1})"));
  }
  if (!shape.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": partition spec ", text, " cannot describe the tuple ",
                     shape.ToString(), "; write a tuple sharding {{...}, {...}} instead"));
  }
  absl::StatusOr<spmd::PartitionSpec> spec =
      spmd::PartitionSpec::Parse(std::string_view(text.data(), text.size()));
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", spec.status().message()));
  absl::StatusOr<spmd::Mesh> mesh = spmd::Mesh::Create(module.config().mesh);
  if (!mesh.ok()) return absl::InvalidArgumentError(absl::StrCat(what, ": ", mesh.status().message()));
  absl::StatusOr<hlo::Sharding> sharding = spmd::ToSharding(*mesh, *spec, shape.rank());
  if (!sharding.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": partition spec ", spec->ToString(),
                                                   " over mesh ", mesh->ToString(), " for ",
                                                   shape.ToString(), ": ",
                                                   sharding.status().message()));
  }
  return sharding;
}

}  // namespace

absl::StatusOr<hlo::Sharding> ParseShardingForValue(std::string_view text,
                                                    const hlo::Module& module,
                                                    const hlo::Shape& shape,
                                                    const std::string& what) {
  absl::string_view stripped = absl::StripAsciiWhitespace(ToAbsl(text));
  absl::StatusOr<hlo::Sharding> sharding;
  if (absl::StartsWith(stripped, "P(") || absl::StartsWith(stripped, "P (")) {
    sharding = ShardingFromSpec(stripped, module, shape, what);
    if (!sharding.ok()) return sharding.status();
  } else {
    sharding = hlo::ParseSharding(std::string_view(stripped.data(), stripped.size()));
    if (!sharding.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": '", stripped, "' is neither an HLO sharding such as {devices=[2,1]0,1} nor a ",
          "partition spec such as P(data, None): ", sharding.status().message()));
    }
  }
  // Device ids are checked when compiling, once the device count is known.
  absl::Status fits = sharding->Validate(shape, /*num_devices=*/0);
  if (!fits.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": sharding ", sharding->ToString(),
                                                   " does not fit ", shape.ToString(), ": ",
                                                   fits.message()));
  }
  return sharding;
}

absl::Status SetModuleMesh(hlo::Module& module, std::string_view text) {
  absl::StatusOr<spmd::Mesh> mesh = spmd::Mesh::Parse(text);
  if (!mesh.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("mesh '", ToAbsl(text), "': ", mesh.status().message()));
  }
  if (mesh->num_axes() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("mesh '", ToAbsl(text), "' has no axes; write it as clients=2,data=2"));
  }
  module.mutable_config().mesh = mesh->axes();
  module.mutable_config().num_partitions = mesh->num_devices();
  return absl::OkStatus();
}

}  // namespace sharc::driver
