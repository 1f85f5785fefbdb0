// Recognises while loops with a static trip count (JAX's fori_loop): a tuple
// carry with an integer counter that starts at a constant, grows by one per
// iteration and is compared LT against a constant. Reverse mode needs the trip
// count to size the buffers that save each iteration's residuals.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "hlo/ir/instruction.h"

namespace sharc::autodiff {

struct ForiLoop {
  int64_t counter_index = 0;  // element of the carry tuple
  int64_t start = 0;
  int64_t trip_count = 0;
};

// InvalidArgument naming the while instruction when it is not such a loop.
absl::StatusOr<ForiLoop> MatchForiLoop(const hlo::Instruction& while_inst);

// Looks through get-tuple-element(tuple(...)) chains to the value itself.
const hlo::Instruction* ResolveTupleElements(const hlo::Instruction* value);

}  // namespace sharc::autodiff
