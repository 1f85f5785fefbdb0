// A map whose function is a tree of elementwise ops over its parameters
// and scalar constants becomes those ops on whole arrays, so that every
// later pass (autodiff, vmap, propagation, partitioning, fusion and Halide
// codegen) sees ops it has rules for:
//
//   %f (p0: f32[], p1: f32[]) -> f32[] {
//     %c = f32[] constant(2)
//     %m = f32[] multiply(%p0, %c)
//     ROOT %r = f32[] add(%m, %p1)
//   }
//   %y = f32[4,3] map(%a, %b), dimensions={0,1}, to_apply=%f
// ->
//   %y.c = f32[] constant(2)
//   %y.c.broadcast = f32[4,3] broadcast(%y.c), dimensions={}
//   %y.m = f32[4,3] multiply(%a, %y.c.broadcast)
//   %y = f32[4,3] add(%y.m, %b)
//
// A map whose function does anything else (calls, reductions, control
// flow, side effects) stays a map: the interpreter runs it element by
// element. LowerForCompute runs this pass.
#pragma once

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"

namespace sharc::hlo {

// Inlines `map` (an instruction of `computation`) when its function allows;
// returns whether it did.
absl::StatusOr<bool> InlineElementwiseMap(Computation& computation, Instruction* map);

}  // namespace sharc::hlo
