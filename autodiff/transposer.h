// The transposer: the driver that applies the transpose rules to a linear
// program. A forward pass copies the non-linear instructions (residual
// arithmetic, zeros) into the target; a backward pass walks the linear
// instructions in reverse, accumulating each value's cotangent and asking its
// op's rule where the cotangent goes.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "autodiff/linearity.h"
#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

class Transposer : public TransposeContext {
 public:
  explicit Transposer(Emitter& target) : target_(target) {}

  Emitter& emitter() override { return target_; }
  const LinearTree& Linearity(const Instruction* value) const override {
    return trees_.at(value);
  }
  absl::StatusOr<Instruction*> Primal(const Instruction* value) override;
  Instruction* Materialize(const Cotangent& ct, const Shape& shape) override;
  absl::StatusOr<TransposedCallee> TransposeCallee(const Computation& callee,
                                                   const std::vector<LinearTree>& params) override;

  // Transposes `linear` into the target. `param_values[i]` is parameter i's
  // value in the target (nullptr if it is entirely linear); `root_ct` the
  // cotangent of the root. Returns one cotangent per parameter.
  absl::StatusOr<std::vector<Cotangent>> Run(const Computation& linear,
                                             const std::vector<LinearTree>& params,
                                             const std::vector<Instruction*>& param_values,
                                             Cotangent root_ct);

 private:
  void Accumulate(Cotangent& acc, Cotangent add, const Shape& shape);

  Emitter& target_;
  absl::flat_hash_map<const Instruction*, LinearTree> trees_;
  absl::flat_hash_map<const Instruction*, Instruction*> forward_;
};

// Transposes `callee` into a new computation of its module (see
// TransposedCallee).
absl::StatusOr<TransposedCallee> TransposeComputation(const Computation& callee,
                                                      const std::vector<LinearTree>& params);

}  // namespace sharc::autodiff
