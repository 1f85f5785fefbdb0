// Tidying the programs the transforms build: rules emit freely (zeros that
// end up unused, get-tuple-element of tuples built a moment before), and
// this removes what the result does not need, so printed derivatives read
// like hand-written ones.
#pragma once

#include <vector>

#include "hlo/ir/module.h"

namespace sharc::autodiff {

// Forwards get-tuple-element(tuple(...)) to the element and removes
// instructions nothing uses (parameters, the root and side effects stay).
void SimplifyComputation(hlo::Computation& computation);

// Simplifies every computation of `module` that `keep` reaches and removes
// the computations in `created` that none of `keep` reaches.
void CleanUp(hlo::Module& module, const std::vector<hlo::Computation*>& keep,
             const std::vector<hlo::Computation*>& created);

}  // namespace sharc::autodiff
