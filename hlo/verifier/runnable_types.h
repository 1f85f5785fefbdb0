// Whether a module can be computed with: sharc reads, prints and verifies
// XLA's sub-byte integers, narrow floats and complex types, but stores no
// values of them. Every command that computes (run, the passes, the C API)
// checks this first, so that no evaluator or lowering meets such a type.
#pragma once

#include "absl/status/status.h"
#include "hlo/ir/module.h"

namespace sharc::hlo {

// Unimplemented naming the first instruction of an op that cannot run
// (send, recv: OpDef::cannot_run) and why; else InvalidArgument naming the
// first value (instruction, its text and location) whose shape holds a type
// that is not runnable or a bounded dynamic dimension. Tokens run (as
// empty values).
absl::Status CheckRunnableTypes(const Module& module);

// The same for propagating and partitioning, which move no values: the ops
// that cannot run (send, recv) are accepted too.
absl::Status CheckPartitionableTypes(const Module& module);

// The first element type in `shape` (any tuple leaf) that is not runnable
// (tokens aside with `allow_tokens`), or kInvalid if there is none. Complex
// types count as runnable here: the ops that compute with them are checked
// one by one (CheckComplexSupported, hlo/ops/complex_semantics.h).
PrimitiveType FirstUnrunnableType(const Shape& shape, bool allow_tokens = false);

}  // namespace sharc::hlo
