// Whether a module can be computed with: sharc reads, prints and verifies
// XLA's sub-byte integers, narrow floats and complex types, but stores no
// values of them. Every command that computes (run, the passes, the C API)
// checks this first, so that no evaluator or lowering meets such a type.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

// InvalidArgument naming the first value (instruction, its text and
// location) whose shape holds a type that is not runnable or a bounded
// dynamic dimension.
absl::Status CheckRunnableTypes(const Module& module);

// The first element type in `shape` (any tuple leaf) that is not runnable,
// or kInvalid if there is none.
PrimitiveType FirstUnrunnableType(const Shape& shape);

}  // namespace sharc::hlo
