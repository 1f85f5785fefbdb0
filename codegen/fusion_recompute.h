// Internal to codegen/fusion.cc: which values a row kernel computes again
// from what it already reads, instead of reading them from memory.
//
// Softmax and its gradient over f32[16,8,128,128] scores (the training
// step's attention) read the scores and the values made from them:
//
//     before:  m = max(s)                ; kernel 1 reads s
//              x = s - m                 ; kernel 2 reads s, writes x
//              e = exp(x)                ; kernel 3 reads x, writes e
//              z = sum(e)                ; kernel 4 reads e
//              p = exp(x - log z)        ; kernel 5 reads x, writes p
//              g = f(s, m, z, e, p, dp)  ; kernel 6 reads s, e, p, dp
//
//     after:   p = exp(x - log z)        ; one row kernel reads s, writes p
//                {m, x, e, z computed per row}
//              g = f(s, dp)              ; one row kernel reads s and dp
//                {m, x, e, z, p computed again per row}
//
// Each row is in L1 while its kernel works on it, so the copies cost
// arithmetic only (a few exp per element), where each value read instead is
// a full-size buffer stored by one kernel and loaded by another.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "hlo/ir/instruction.h"

namespace sharc::codegen {

struct RecomputeLimits {
  size_t max_instructions = 24;  // added to the kernel by one recomputed input
  int max_compute_bound = 3;     // of them transcendental, division, root (lowering.h)
};

// The instructions (producers first) a kernel must add to compute its input
// `input` (full-size or one value per row) itself, or nothing if it cannot
// do so without reading a new full-size buffer. The kernel's output has dims `full` = [rows..., C];
// `members` are the instructions it computes and `inputs` the values it
// reads. The walk goes from `input` towards producers through elementwise
// ops, broadcasts, reshapes and reductions of rows (dims `rows`, the last
// dim reduced) and stops at members, at full-size values the kernel
// already reads, and at values no bigger than one per row (read instead
// when they cannot be computed). `joinable(i)` says whether `i` may be
// computed in this kernel at all (lowerable, not owned by another kernel).
//
// A full-size value that `stored(i)` says is in memory anyway (a dot reads
// it, say) is read rather than computed again: a copy then saves no store,
// only a load, and on the session 28 host (one core, 12-18 GB/s) one
// transcendental per element costs about as much as loading a full-size f32
// (softmax's gradient computing the probabilities, the exp and their sum
// again from the scores took 3.4 ms, reading them 2.7).
// The input dims of a reduce over its innermost dim only (one value per
// row), else nothing. Reductions over the same rows are siblings: a fused
// group may hold several of them (see row_kernel_schedule.h).
std::optional<std::vector<int64_t>> RowReductionInput(const hlo::Instruction& inst);

std::optional<std::vector<hlo::Instruction*>> RecomputeClosure(
    hlo::Instruction* input, const absl::flat_hash_set<hlo::Instruction*>& members,
    const absl::flat_hash_set<hlo::Instruction*>& inputs, const std::vector<int64_t>& full,
    const std::function<bool(const hlo::Instruction&)>& joinable,
    const std::function<bool(const hlo::Instruction&)>& stored, const RecomputeLimits& limits);

}  // namespace sharc::codegen
