#include "hlo/passes/generic_passes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/passes/algebraic_simplifier.h"
#include "hlo/passes/call_inliner.h"
#include "hlo/passes/cse.h"
#include "hlo/passes/dce.h"

namespace sharc::hlo {

const std::vector<std::string>& GenericPassNames() {
  static const std::vector<std::string> names = {"inline", "algsimp", "cse", "dce"};
  return names;
}

absl::StatusOr<std::unique_ptr<Pass>> MakeGenericPass(std::string_view name) {
  if (name == "inline") return std::make_unique<CallInliner>();
  if (name == "algsimp") return std::make_unique<AlgebraicSimplifier>();
  if (name == "cse") return std::make_unique<CommonSubexpressionElimination>();
  if (name == "dce") return std::make_unique<DeadCodeElimination>();
  return absl::NotFoundError(absl::StrCat("no generic pass '", std::string(name), "' (known: ",
                                          absl::StrJoin(GenericPassNames(), ", "), ")"));
}

}  // namespace sharc::hlo
