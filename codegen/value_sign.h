// Internal to codegen/: what the HLO around a floating-point value proves
// about its sign, so a lowering can leave out range handling that cannot
// be reached. The facts hold for every element, with NaN always allowed
// (it is not ordered, and every lowering passes it through anyway), and
// -0 counted as zero.
//
// The one the kernels use today: softmax's exp(x - max(x)). Its argument
// is never positive, so exp cannot overflow and its result needs no
// overflow clamp (vector_math.h, VectorExpOfNonPositive).
#pragma once

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "hlo/ir/instruction.h"

namespace sharc::codegen {

// Sign facts of the values of one kernel. Only instructions `in_kernel`
// accepts are looked through: anything else is an input the kernel knows
// nothing about. A kernel is cached by its canonical text, so a fact must
// follow from that text alone, never from the producers of its inputs.
class KernelValueSigns {
 public:
  explicit KernelValueSigns(std::function<bool(const hlo::Instruction&)> in_kernel)
      : in_kernel_(std::move(in_kernel)) {}

  // Every element of `value` is <= 0 or NaN. Proven from its producers:
  // x - y where y >= x is a max-reduction of x broadcast back (with or
  // without the kept size-1 dims of keepdims=True; not where x is a float
  // product, which the subtraction may fuse and not round), or where
  // x <= 0 <= y;
  // -y for y >= 0; minimum with a non-positive side; sums of non-positives
  // and products of opposite signs; and broadcasts, reshapes, transposes,
  // slices, copies and float conversions of such values. False when it is
  // not proven.
  bool NonPositive(const hlo::Instruction& value) { return Prove(value, kNonPositive, 0); }

  // Every element of `value` is >= 0 or NaN: abs, exp, sqrt, x * x, -y for
  // y <= 0, maximum with a non-negative side, sums and products of
  // non-negatives, and their data movement.
  bool NonNegative(const hlo::Instruction& value) { return Prove(value, kNonNegative, 0); }

 private:
  enum Sign { kNonPositive = 0, kNonNegative = 1 };
  bool Prove(const hlo::Instruction& value, Sign sign, int depth);
  bool ProveUncached(const hlo::Instruction& value, Sign sign, int depth);
  bool IsMaxReductionOf(const hlo::Instruction& bound, const hlo::Instruction& value) const;

  std::function<bool(const hlo::Instruction&)> in_kernel_;
  absl::flat_hash_map<const hlo::Instruction*, bool> known_[2];
};

}  // namespace sharc::codegen
