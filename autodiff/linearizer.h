// The linearizer: the driver that applies the JVP rules to a computation.
// In forward mode (Jvp) primal and tangent instructions go to one
// computation. When linearizing, they go to two: the primal computation and a
// linear tangent computation that reads what it needs of the primal as
// residual parameters. This is JAX's linearize (JVP followed by partial
// evaluation) done in one pass, because every rule already says which values
// are primal and which are tangent.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

class Linearizer : public JvpContext {
 public:
  // `split` = false: forward mode, `primal` and `tangent` must be the same
  // emitter. `split` = true: residuals become new parameters of the tangent
  // computation, numbered after the ones it already has.
  Linearizer(Emitter& primal, Emitter& tangent, bool split)
      : primal_(primal), tangent_(tangent), split_(split) {}

  bool split() const override { return split_; }
  Emitter& primal() override { return primal_; }
  Emitter& tangent() override { return tangent_; }
  Instruction* Residual(Instruction* value) override;
  absl::StatusOr<LinearizedCallee> LinearizeCallee(const Computation& callee,
                                                  std::vector<bool> differentiable) override;
  Instruction* EmitPrimal(const Instruction& inst, std::vector<Instruction*> operands) override;
  absl::StatusOr<JvpValue> Inline(const Computation& callee,
                                  const std::vector<Instruction*>& primals,
                                  const std::vector<Instruction*>& tangents) override {
    return Run(callee, primals, tangents);
  }

  // Differentiates `source` with its parameters bound to `primal_params` (in
  // the primal computation) and `tangent_params` (in the tangent
  // computation; nullptr = zero tangent). Returns the root's values.
  absl::StatusOr<JvpValue> Run(const Computation& source,
                               const std::vector<Instruction*>& primal_params,
                               const std::vector<Instruction*>& tangent_params);

  // Split mode: the primal values read as residuals, in parameter order.
  const std::vector<Instruction*>& residuals() const { return residual_values_; }

 private:
  absl::StatusOr<JvpValue> Differentiate(const Instruction& inst);

  Emitter& primal_;
  Emitter& tangent_;
  bool split_;
  absl::flat_hash_map<const Instruction*, JvpValue> values_;
  absl::flat_hash_map<const Instruction*, Instruction*> residual_params_;
  std::vector<Instruction*> residual_values_;
};

// Splits `f` into primal and linear computations added to f's module (see
// LinearizedCallee). `differentiable[i]` = false gives parameter i a zero
// tangent. With `flatten`, a tuple result's elements are returned flat
// before the residuals (mapreduce.map needs a flat tuple); otherwise the
// primal returns (y, r...).
absl::StatusOr<LinearizedCallee> LinearizeComputation(const Computation& f,
                                                      const std::vector<bool>& differentiable,
                                                      bool flatten);

// Whether values of `type` have tangents: floating-point and complex
// (whose tangents are complex, as in JAX).
bool IsDifferentiableType(PrimitiveType type);

// Whether a value of `shape` can carry a nonzero tangent: floating-point and
// complex arrays, and tuples (leaf by leaf).
bool CarriesTangent(const Shape& shape);

}  // namespace sharc::autodiff
