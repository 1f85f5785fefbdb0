// The transpose rule of scatter (scatter.cc), registered with the other
// indexed ops' rules (indexing.cc).
#pragma once

#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

void RegisterScatterTransposeRule(TransposeRuleRegistry& registry);

}  // namespace sharc::autodiff
