// A reducer computation applied elementwise to whole arrays, differentiated:
// the general JVP of reduce and reduce-window for reducers that are not one
// known binary op (a composite of elementwise ops, or the value-and-index
// pairs of argmax). The scalar reducer is vectorised with vmap and
// differentiated inline by the JVP rules of the ops it is made of, so any
// reducer those rules cover works, with no pattern matching on its shape.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

// The N arrays (one per reduced input) a variadic reduction carries, each
// with its tangent (nullptr = zero; always nullptr for integer arrays).
using ReductionState = std::vector<JvpValue>;

class ReducerApplication {
 public:
  // `inst` is the reduce or reduce-window whose to_apply is applied; it names
  // the op in errors.
  ReducerApplication(const Instruction& inst, JvpContext& ctx) : inst_(inst), ctx_(ctx) {}

  // to_apply(acc, x) element by element, for states of equal dims.
  absl::StatusOr<ReductionState> Apply(const ReductionState& acc, const ReductionState& x);

  // Helpers that keep a state's primal and tangent halves in step.
  ReductionState Map(const ReductionState& state,
                     const std::function<Instruction*(Emitter&, Instruction*)>& fn);
  // select(pred, a, b) leaf by leaf; `pred` is a primal value.
  ReductionState Select(Instruction* pred, const ReductionState& a, const ReductionState& b);
  // Leaves' tangents with zeros made explicit (for ops that need every input).
  Instruction* TangentOrZeros(const JvpValue& v);
  // The tangent of the reduction's result from its final state: the one
  // leaf's for N == 1, else a tuple (zeros for integer leaves); nullptr when
  // it is zero.
  Instruction* ResultTangent(const ReductionState& state);

 private:
  // The reducer vectorised over a leading axis of `size` elements.
  absl::StatusOr<const Computation*> Vectorized(int64_t size);

  const Instruction& inst_;
  JvpContext& ctx_;
  absl::flat_hash_map<int64_t, const Computation*> vectorized_;
};

}  // namespace sharc::autodiff
