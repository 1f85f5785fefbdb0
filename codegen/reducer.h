// Internal to codegen/: recognising plain binary reducers and combining two
// values with one, shared by reduce, reduce-window and the fusion pass.
#pragma once

#include <optional>

#include "hlo/ir/computation.h"
#include "hlo/ir/opcode.h"

namespace Halide {
struct Expr;
}

namespace sharc::codegen {

// The opcode of `reducer` if it is a plain binary reducer: the project's one
// recogniser, hlo::MatchBinaryReducer (add/multiply/maximum/minimum, and
// and/or/xor on integers and pred, of its two scalar parameters).
std::optional<hlo::Opcode> PlainBinaryReducer(const hlo::Computation& reducer);

// a op b on values of the compute type, with the elementwise ops' semantics.
Halide::Expr Combine(hlo::Opcode op, const Halide::Expr& a, const Halide::Expr& b);

}  // namespace sharc::codegen
