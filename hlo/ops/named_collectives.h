// The type-level facts of the named-axis collectives (DESIGN.md, "shard_map
// and device variance"), stated once: how each changes device variance,
// what variance its operand needs, its transpose partner and what it lowers
// to. The variance pass (spmd/variance.h), the lowering and autodiff's
// transpose rules key on this table instead of switching over opcodes.
#pragma once

#include <optional>
#include <string>

#include "hlo/ir/opcode.h"

namespace sharc::hlo {

// How the result's variance over the op's `axes` relates to the operand's
// (axes the op does not name keep the operand's variance).
enum class VarianceEffect {
  kToInvariant,  // psum, pmax, pmin, all_gather_invariant: V -> I
  kToVarying,    // pbroadcast, pscatter: I -> V (no communication)
  kVarying,      // all_gather, psum_scatter, all_to_all, ppermute: V -> V
  kSource,       // axis_index: no operand, varying over its axes
};

// What the operand must be over the op's axes.
enum class OperandVariance {
  kVarying,    // the pass pbroadcasts an invariant operand first (JAX's wrappers)
  kInvariant,  // pbroadcast: an operand already varying there is an error
  kAny,        // pscatter: a local slice of whatever it is given
};

struct NamedCollectiveInfo {
  Opcode opcode;
  VarianceEffect effect;
  OperandVariance operand;
  // The op its transpose uses (nullopt: not linear). all_to_all transposes
  // to itself with split and concat dimensions swapped, ppermute to itself
  // with the pairs inverted.
  std::optional<Opcode> transpose;
  // The XLA collective it lowers to ("" = no communication).
  std::string lowers_to;
};

// The entry for a named-axis collective, or nullptr for any other opcode.
const NamedCollectiveInfo* FindNamedCollective(Opcode opcode);

}  // namespace sharc::hlo
