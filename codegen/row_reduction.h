// Internal to codegen/ (includes Halide.h): reduce over the innermost,
// contiguous dim of long rows, vectorised along the row. Each row is folded
// into 4 vectors of lane partials (4 independent accumulators), the lanes are
// combined as a tree, and init is combined last, so the fold is not in the
// interpreter's order: used only where any order gives the same result
// (integers, float max/min) or where XLA reorders too (f32/f64 sums).
#pragma once

#include "codegen/lowering.h"

namespace sharc::codegen {

// Rows at least this long take the vectorised form (shorter rows are cheap
// either way and keep the interpreter's order).
inline constexpr int64_t kLongRow = 256;

// True if `inst` (a reduce combining with `op`) reduces only the innermost
// dim of rows long enough, with an op and type whose result does not depend
// on the order of the fold.
bool IsVectorizableRowReduction(const hlo::Instruction& inst, hlo::Opcode op);

// The vectorised lowering. Its `schedule` computes all rows at once (one
// row at a time, rows in parallel); its `schedule_in_row` computes a row
// inside a consumer's row loop (a row kernel, pipeline_builder.cc).
Lowered LowerRowReduction(const hlo::Instruction& inst, absl::Span<const LoweredValue> ops,
                          hlo::Opcode op);

}  // namespace sharc::codegen
