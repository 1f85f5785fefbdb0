#include "autodiff/transform_util.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "autodiff/builder.h"
#include "autodiff/cleanup.h"
#include "hlo/base/status_macros.h"

namespace sharc::autodiff {

absl::StatusOr<hlo::Computation*> RunTransform(
    hlo::Module& module, const hlo::Computation& f, const char* what,
    const std::function<absl::StatusOr<hlo::Computation*>()>& build) {
  ASSIGN_OR_RETURN(std::vector<hlo::Computation*> results,
                   RunTransformMany(module, f, what,
                                    [&]() -> absl::StatusOr<std::vector<hlo::Computation*>> {
                                      ASSIGN_OR_RETURN(hlo::Computation * c, build());
                                      return std::vector<hlo::Computation*>{c};
                                    }));
  return results[0];
}

absl::StatusOr<std::vector<hlo::Computation*>> RunTransformMany(
    hlo::Module& module, const hlo::Computation& f, const char* what,
    const std::function<absl::StatusOr<std::vector<hlo::Computation*>>()>& build) {
  if (f.parent() != &module) {
    return absl::InvalidArgumentError(absl::StrCat(what, " of '", f.name(),
                                                   "': the computation is not part of module '",
                                                   module.name(), "'"));
  }
  if (f.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of '", f.name(), "': the computation has no root"));
  }
  std::vector<hlo::Computation*> before = module.computations();
  absl::flat_hash_set<hlo::Computation*> existing(before.begin(), before.end());
  absl::StatusOr<std::vector<hlo::Computation*>> result = build();
  std::vector<hlo::Computation*> created;
  for (hlo::Computation* c : module.computations()) {
    if (!existing.contains(c)) created.push_back(c);
  }
  std::vector<hlo::Computation*> keep;
  if (result.ok()) keep = *result;
  CleanUp(module, keep, created);
  module.SortCalleesFirst();
  return result;
}

absl::StatusOr<std::unique_ptr<hlo::Module>> TransformEntry(
    const hlo::Module& module,
    const std::function<absl::StatusOr<hlo::Computation*>(hlo::Module&, const hlo::Computation&)>&
        transform) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("module '", module.name(), "' has no entry computation"));
  }
  std::unique_ptr<hlo::Module> clone = module.Clone();
  hlo::Computation* entry = clone->entry();
  ASSIGN_OR_RETURN(hlo::Computation * result, transform(*clone, *entry));
  clone->set_entry(result);
  // The new entry has a signature of its own, which the original's buffer
  // aliasing does not describe.
  clone->mutable_config().input_output_alias.clear();
  clone->mutable_config().buffer_donors.clear();
  // Keep only what the new entry calls (the original entry included, if the
  // derivative still calls it).
  CleanUp(*clone, {result}, clone->computations());
  clone->SortCalleesFirst();
  return clone;
}

}  // namespace sharc::autodiff
