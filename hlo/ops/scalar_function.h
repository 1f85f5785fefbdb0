// A function of scalars (parameters, scalar constants and elementwise ops,
// as a map's computation or a sort comparator's key holds) applied to whole
// arrays: each op on arrays of one dims, each constant broadcast.
//
//   %c = f32[] constant(2)                %y.c.scalar = f32[] constant(2)
//   ROOT %r = f32[] multiply(%p0, %c)  -> %y.c = f32[4,3] broadcast(%y.c.scalar), dimensions={}
//                                         %y = f32[4,3] multiply(%a, %y.c)
//
// hlo/passes/inline_map.h and sort_key_function.h lift functions this way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

// An op of scalars that applies elementwise to arrays of any dims: an
// elementwise op without side effects or callees, or a bitcast-convert of a
// scalar (which keeps the bit width).
bool IsScalarElementwise(const Instruction& inst);

// Whether everything `root` depends on is a parameter, a scalar constant or
// IsScalarElementwise.
bool IsScalarFunction(const Instruction& root);

// Adds `root`'s function on arrays of `dims` through `add` (which places
// each new instruction), with parameter k replaced by `argument(k)`; new
// instructions are named `prefix.NAME`, the last `root_name`. Returns the
// root's array (an argument itself when the root is a parameter).
Instruction* LiftScalarFunction(
    const Instruction& root, const std::vector<int64_t>& dims,
    absl::FunctionRef<Instruction*(int64_t)> argument,
    absl::FunctionRef<Instruction*(std::unique_ptr<Instruction>)> add, const std::string& prefix,
    const std::string& root_name);

}  // namespace sharc::hlo
