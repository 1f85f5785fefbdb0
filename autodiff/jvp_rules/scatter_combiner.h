// What a scatter's combiner does with the value already in place and the
// update: the JVP and transpose rules of scatter both depend on it, and must
// agree on which scatters are linear.
#pragma once

#include "hlo/ir/computation.h"

namespace sharc::autodiff {

enum class ScatterCombiner {
  kAdd,        // ROOT add(current, update): scatter-add
  kOverwrite,  // ROOT update: the update replaces the current value
  kOther,      // anything else (max, multiply, composite): not linear
};

ScatterCombiner ClassifyScatterCombiner(const hlo::Computation& combiner);

// A scalar `type` combiner `ROOT parameter(1)` in `module` (the module's
// `sharc.overwrite.<type>`, created on first use).
hlo::Computation* OverwriteCombiner(hlo::Module& module, hlo::PrimitiveType type);

}  // namespace sharc::autodiff
