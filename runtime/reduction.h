// Element loops of the collectives: combining contributions with a
// ReductionKind in a fixed order, for every element type. Shared by the
// in-process communicator and (later) the MPI backend's local stage, so both
// give the same bits.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "hlo/ir/primitive_type.h"
#include "runtime/communicator.h"

namespace sharc::runtime {

// OK if `kind` is defined on `type` (and/or are not defined on floats).
absl::Status CheckReduction(hlo::PrimitiveType type, ReductionKind kind);

// out[i] = ((in[0][offset+i] op in[1][offset+i]) op in[2][offset+i]) ...
// for i in [0, count), inputs combined in the order given. `out` must not
// overlap any input. `type`/`kind` must pass CheckReduction.
void ReduceElements(hlo::PrimitiveType type, ReductionKind kind, const void* const* inputs,
                    int64_t num_inputs, int64_t offset, int64_t count, void* out);

}  // namespace sharc::runtime
