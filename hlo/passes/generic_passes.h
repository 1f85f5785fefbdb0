// The generic passes by name, for running one or a few alone (`sharc opt
// FILE --passes inline,algsimp`, XLA's hlo-opt): each rewrites any module
// with no knowledge of shardings or devices beyond keeping them intact.
//
//   name      pass
//   inline    calls -> their callee's body (call_inliner.h)
//   algsimp   exact algebraic identities (algebraic_simplifier.h)
//   cse       duplicate values -> one (cse.h)
//   dce       unused instructions go; effects stay (dce.h)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "hlo/passes/pass.h"

namespace sharc::hlo {

// The names above, in that order.
const std::vector<std::string>& GenericPassNames();

// The pass called `name`; NotFound naming the known ones otherwise.
absl::StatusOr<std::unique_ptr<Pass>> MakeGenericPass(std::string_view name);

}  // namespace sharc::hlo
