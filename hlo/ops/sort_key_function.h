// A sort comparator of the form compare(f(p_2i), f(p_2i+1)), LT or GT,
// where f is elementwise ops of its one parameter and scalar constants.
// JAX's comparison of floats in total order is one:
//
//   key(x) = x < 0 ? INT_MAX - bits(x) : bits(x)   (as s32)
//   less(a, b) = key(a) > key(b)
//
// Sorting by such a comparator is sorting by the keys f(x), so the
// interpreter computes them once per element (on whole arrays) instead of
// calling the comparator twice per comparison.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/literal.h"

namespace sharc::hlo {

struct KeyFunction {
  int64_t operand = 0;            // the operand whose keys order the rows
  bool descending = false;
  bool total_order = false;       // the compare's type=TOTALORDER
  const Instruction* key = nullptr;  // f applied to parameter `parameter`
  int64_t parameter = 0;
};

std::optional<KeyFunction> MatchKeyFunction(const Computation& comparator);

// A comparator that orders by one key function and breaks its ties with
// another (XLA's TopK comparators: the total-order key descending, then the
// index ascending):
//
//   first = compare(f(a), f(b)), GT      reversed = compare(f(b), f(a)), GT
//   ROOT select(compare(first, reversed), direction=EQ, compare(i, j), LT, first)
struct LexicographicKeys {
  KeyFunction first, second;
};
std::optional<LexicographicKeys> MatchLexicographic(const Computation& comparator);

// f of every element of `operand`: an array of its dims and f's type.
absl::StatusOr<Literal> EvaluateKeys(const KeyFunction& function, const Literal& operand);

}  // namespace sharc::hlo
