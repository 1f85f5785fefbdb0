// Names in transposed programs. A transposed computation is called
// `<name>.transpose`, and the transpose of `<name>.transpose` is `<name>`
// again; each cotangent parameter is named after the result it is the
// cotangent of, and each result after the parameter it belongs to. So
// transposing twice gives back the original names, and a linear program
// whose transpose is exact (psum <-> pbroadcast, ...) prints the same after
// two transpositions (docs/shard_map.md).
#pragma once

#include <string>
#include <vector>

#include "autodiff/builder.h"

namespace sharc::autodiff {

// A free computation name for the transpose of `name` in `module`.
std::string TransposedComputationName(const Module& module, const std::string& name);

// The names of a computation's result elements, for naming their cotangent
// parameters: the operands of a tuple root, the root itself for an array
// (`<root>.k` for elements of another tuple-shaped root).
std::vector<std::string> ResultElementNames(const Computation& computation);

// Renames `value` to `name` when it was built by the transposition (not a
// parameter, nor a value copied from the program with its own name) and
// the name is free in its computation.
void NameCotangent(Instruction* value, const std::string& name);

}  // namespace sharc::autodiff
