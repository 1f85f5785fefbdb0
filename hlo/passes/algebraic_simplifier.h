// Algebraic simplification: the identities that hold bit for bit (a subset
// of XLA's AlgebraicSimplifier; nothing that reassociates floats or drops a
// signed zero or a NaN):
//
//   x + 0 -> x         integers and pred; floats only for -0.0 (+0.0 turns
//                      -0.0 into +0.0)
//   x - 0 -> x         integers; floats for +0.0
//   x * 1, 1 * x, x / 1 -> x
//   -(-x) -> x
//   reshape, transpose, broadcast, convert, slice or concatenate that
//     leaves its operand as it is -> the operand
//   reshape(reshape(x)) -> reshape(x)
//   transpose(transpose(x, p), q) -> transpose(x, p∘q)
//   broadcast(broadcast(x, d), e) -> broadcast(x, e∘d)
//
// A constant operand may be written as a constant or a broadcast of a
// scalar constant (how HLO spells a splat).
//
//   before:
//     %x = f32[2,3] parameter(0)
//     %one = f32[] constant(1)
//     %ones = f32[2,3] broadcast(%one), dimensions={}
//     %m = f32[2,3] multiply(%x, %ones)
//     %t1 = f32[3,2] transpose(%m), dimensions={1,0}
//     ROOT %t = f32[2,3] transpose(%t1), dimensions={1,0}
//   after (x*1 is x, the transposes cancel):
//     ROOT %x = f32[2,3] parameter(0)
//
// Shardings are the user's word on a value, so a rewrite never loses one:
// an annotated instruction is replaced only by a value with the same
// sharding, and an annotated instruction is never looked through.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/module.h"
#include "hlo/passes/pass.h"

namespace sharc::hlo {

// Simplifies `computation` until nothing applies; true if anything did.
bool SimplifyAlgebra(Computation& computation);

class AlgebraicSimplifier final : public Pass {
 public:
  std::string_view name() const override { return "algsimp"; }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace sharc::hlo
