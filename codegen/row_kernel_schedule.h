// Internal to codegen/ (includes Halide.h): the schedule of a "row kernel",
// one output of shape [rows..., C] whose reductions all produce one value
// per row (softmax's max and sum of exp, layernorm's mean and variance).
// Everything a row needs is computed inside the output's row loop while the
// row is in L1: the sibling reductions one after the other on the same row,
// each vectorised along it, then the row of output. Without this the
// reductions run as separate passes over the whole input.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "codegen/kernel_graph.h"
#include "codegen/lowering.h"

namespace sharc::codegen {

// Schedules `output` (the kernel's only output) and every reduction of
// `graph` as a row kernel and returns true, or returns false and schedules
// nothing when `graph` is not one.
bool ScheduleRowKernel(const KernelGraph& graph,
                       const absl::flat_hash_map<const hlo::Instruction*, Lowered>& lowered,
                       Halide::Func output);

}  // namespace sharc::codegen
