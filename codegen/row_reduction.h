// Internal to codegen/ (includes Halide.h): reduce over the innermost,
// contiguous dim of long rows, vectorised along the row. Each row is folded
// into 4 vectors of lane partials (4 independent accumulators), the lanes are
// combined as a tree, and init is combined last, so the fold is not in the
// interpreter's order: used only where any order gives the same result
// (integers, float max/min) or where XLA reorders too (f32/f64 sums).
#pragma once

#include "codegen/lowering.h"

namespace sharc::codegen {

// Sums over rows at least this long (a reduce of the innermost dims) are
// split into partial sums (ScheduleLongRowSum); shorter ones keep the
// interpreter's order.
inline constexpr int64_t kLongRow = 256;
// Rows this long or longer (and at least 4 vectors) take the vectorised
// row form. Attention's rows are 128 long: its softmax backward (three
// chained row sums over f32[16,8,128,128]) took 10.3 ms a layer folding
// them one element at a time, the medium training step's largest
// non-GEMM cost (docs/performance.md).
inline constexpr int64_t kVectorizedRow = 32;

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
