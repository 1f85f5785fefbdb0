#include "codegen/value_sign.h"

#include <algorithm>
#include <vector>

#include "codegen/reducer.h"

namespace sharc::codegen {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Proofs stop this many producers up (the kernels' softmax needs three), so
// a long chain cannot exhaust the stack.
constexpr int kMaxDepth = 32;

bool IsFloat(const Instruction& v) {
  return v.shape().is_array() && hlo::IsFloatingPoint(v.shape().type());
}

// Ops that only move or duplicate elements (or change a float's width,
// which keeps its sign): a sign fact of the operand holds for the result.
bool MovesElements(const Instruction& v) {
  switch (v.opcode()) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose:
    case Opcode::kSlice: case Opcode::kCopy:
      return true;
    case Opcode::kConvert:
      return IsFloat(*v.operand(0));
    default:
      return false;
  }
}

}  // namespace

// Whether `bound` is a max-reduction of `value` broadcast back to its
// shape, so that bound[i] >= value[i] for every index i (or is NaN).
// `bound` may be reached through broadcasts and reshapes that only add or
// drop size-1 dims (jnp.max(x, keepdims=True) broadcast to x's shape).
// `to_bound[d]` is the dim of the original bound that dim d of the current
// instruction indexes, -1 where it is a size-1 dim no one indexes.
bool KernelValueSigns::IsMaxReductionOf(const Instruction& bound,
                                        const Instruction& value) const {
  if (bound.shape().dims() != value.shape().dims()) return false;
  // The kernel computes `value` once for the reduction and again for its
  // reader. A float product is rounded in the first, but may be fused into
  // the reader's subtraction (object_writer.h allows contraction), whose
  // exact a*b - max(a*b) can then be positive. Anything else is the same
  // value, bit for bit, at both sites.
  const Instruction* source = &value;
  for (int step = 0; step < kMaxDepth && in_kernel_(*source) && MovesElements(*source); ++step) {
    source = source->operand(0);
  }
  if (in_kernel_(*source) && source->opcode() == Opcode::kMultiply) return false;
  std::vector<int64_t> to_bound(static_cast<size_t>(bound.shape().rank()));
  for (size_t d = 0; d < to_bound.size(); ++d) to_bound[d] = static_cast<int64_t>(d);
  const Instruction* at = &bound;
  for (int step = 0; step < kMaxDepth; ++step) {
    if (!in_kernel_(*at) || at->operand_count() < 1) return false;
    const Instruction& operand = *at->operand(0);
    const hlo::Shape& shape = operand.shape();
    if (!shape.is_array()) return false;
    std::vector<int64_t> next(static_cast<size_t>(shape.rank()), -1);
    if (at->opcode() == Opcode::kBroadcast) {
      const hlo::IntList& dims = at->attr_ints("dimensions");
      if (static_cast<int64_t>(dims.size()) != shape.rank()) return false;
      for (size_t t = 0; t < dims.size(); ++t) {
        if (dims[t] < 0 || dims[t] >= static_cast<int64_t>(to_bound.size())) return false;
        next[t] = to_bound[static_cast<size_t>(dims[t])];
      }
    } else if (at->opcode() == Opcode::kReshape) {
      // Only a reshape that adds or drops size-1 dims: the other dims pair
      // up in order.
      std::vector<int64_t> kept_at, kept_operand;
      for (int64_t d = 0; d < at->shape().rank(); ++d) {
        if (at->shape().dim(d) != 1) kept_at.push_back(d);
      }
      for (int64_t d = 0; d < shape.rank(); ++d) {
        if (shape.dim(d) != 1) kept_operand.push_back(d);
      }
      if (kept_at.size() != kept_operand.size()) return false;
      for (size_t i = 0; i < kept_at.size(); ++i) {
        if (at->shape().dim(kept_at[i]) != shape.dim(kept_operand[i])) return false;
        next[static_cast<size_t>(kept_operand[i])] = to_bound[static_cast<size_t>(kept_at[i])];
      }
    } else {
      break;
    }
    to_bound = std::move(next);
    at = &operand;
  }
  // `at` must be reduce(value, init) with a max reducer: whatever the
  // init, the maximum is >= each element it reduces.
  if (!in_kernel_(*at) || at->opcode() != Opcode::kReduce || at->operand_count() != 2 ||
      at->operand(0) != &value) {
    return false;
  }
  const hlo::Computation* reducer = at->attr_computation("to_apply");
  if (reducer == nullptr || PlainBinaryReducer(*reducer) != Opcode::kMaximum) return false;
  const hlo::IntList& reduced = at->attr_ints("dimensions");
  std::vector<int64_t> kept;  // value's dims the reduction keeps, in order
  for (int64_t d = 0; d < value.shape().rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  if (static_cast<int64_t>(kept.size()) != at->shape().rank()) return false;
  // Each kept dim must index the bound where it indexes the value; a
  // size-1 dim is index 0 in both, wherever it went.
  for (size_t t = 0; t < kept.size(); ++t) {
    if (at->shape().dim(static_cast<int64_t>(t)) != 1 && to_bound[t] != kept[t]) return false;
  }
  return true;
}

bool KernelValueSigns::Prove(const Instruction& value, Sign sign, int depth) {
  auto it = known_[sign].find(&value);
  if (it != known_[sign].end()) return it->second;
  const bool proven = ProveUncached(value, sign, depth);
  // A proof cut short by the depth is kept as a failure too: that only
  // misses a fact, where retrying could make the walk exponential.
  known_[sign][&value] = proven;
  return proven;
}

bool KernelValueSigns::ProveUncached(const Instruction& v, Sign sign, int depth) {
  if (depth > kMaxDepth || !in_kernel_(v) || !IsFloat(v)) return false;
  const int next = depth + 1;
  auto non_positive = [&](int i) { return Prove(*v.operand(i), kNonPositive, next); };
  auto non_negative = [&](int i) { return Prove(*v.operand(i), kNonNegative, next); };
  auto same = [&](int i) { return Prove(*v.operand(i), sign, next); };
  if (MovesElements(v)) return same(0);
  switch (v.opcode()) {
    case Opcode::kAdd:
      return same(0) && same(1);
    case Opcode::kMultiply:
      if (sign == kNonNegative && v.operand(0) == v.operand(1)) return true;
      if (sign == kNonPositive) {
        return (non_positive(0) && non_negative(1)) || (non_negative(0) && non_positive(1));
      }
      return (non_negative(0) && non_negative(1)) || (non_positive(0) && non_positive(1));
    case Opcode::kNegate:
      return sign == kNonPositive ? non_negative(0) : non_positive(0);
    case Opcode::kSubtract:
      if (sign == kNonPositive) {
        return IsMaxReductionOf(*v.operand(1), *v.operand(0)) ||
               (non_positive(0) && non_negative(1));
      }
      return non_negative(0) && non_positive(1);
    case Opcode::kMinimum:
      return sign == kNonPositive && (non_positive(0) || non_positive(1));
    case Opcode::kMaximum:
      return sign == kNonNegative && (non_negative(0) || non_negative(1));
    case Opcode::kAbs: case Opcode::kExp: case Opcode::kSqrt:
      return sign == kNonNegative;
    default:
      return false;
  }
}

}  // namespace sharc::codegen
