// Helpers shared by the op family files: error messages that name the
// instruction, operand checks, and element loops for the evaluators.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "hlo/ir/instruction.h"
#include "hlo/ir/literal.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {

// Debian's Abseil has its own string_view, so absl::StrCat does not accept
// std::string_view; StrArg passes every other argument through unchanged.
template <typename T>
decltype(auto) StrArg(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    return absl::string_view(value.data(), value.size());
  } else {
    return (value);
  }
}

// InvalidArgument "<opcode> <message>, in `<instruction text>` at file:l:c".
template <typename... Args>
absl::Status OpError(const Instruction& inst, const Args&... args) {
  return absl::InvalidArgumentError(
      absl::StrCat(OpcodeName(inst.opcode()), " ", StrArg(args)..., ", in ", inst.Describe()));
}

// Operand i must be an array (not a tuple).
absl::Status ExpectArrayOperand(const Instruction& inst, int64_t i);
// All operands must be arrays with identical dims; returns the first's shape.
absl::StatusOr<Shape> ExpectSameDimsOperands(const Instruction& inst);
// `dims` must be distinct and in [0, rank).
absl::Status ExpectValidDims(const Instruction& inst, absl::Span<const int64_t> dims,
                             int64_t rank, std::string_view what);
// `perm` must be a permutation of 0..rank-1.
absl::Status ExpectPermutation(const Instruction& inst, absl::Span<const int64_t> perm,
                               int64_t rank, std::string_view what);
// The declared shape must be an array of `type` and the given dims.
absl::Status ExpectDeclared(const Instruction& inst, const Shape& inferred);

// Signature check for a called computation: parameters and result shapes.
absl::Status ExpectComputationSignature(const Instruction& inst, const Computation* computation,
                                        std::string_view role,
                                        absl::Span<const Shape> parameters, const Shape* result);

// Calls fn(index) for every multi-index of `dims` in row-major order; `index`
// is a reused vector.
template <typename Fn>
void ForEachIndex(absl::Span<const int64_t> dims, Fn&& fn) {
  for (int64_t d : dims)
    if (d == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  do {
    fn(static_cast<const std::vector<int64_t>&>(index));
  } while (NextIndex(dims, index));
}

// Row-major linear index of `index` in `dims`.
inline int64_t LinearIndex(absl::Span<const int64_t> dims, absl::Span<const int64_t> index) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

// Copies element `src_index` of `src` to element `dst_index` of `dst` (same
// element type, raw bytes).
inline void CopyElement(const Literal& src, int64_t src_index, Literal& dst, int64_t dst_index) {
  int64_t w = ByteWidth(src.shape().type());
  std::memcpy(dst.untyped_data() + dst_index * w, src.untyped_data() + src_index * w,
              static_cast<size_t>(w));
}

// The evaluator of an op that cannot run: Unimplemented with the op's
// OpDef::cannot_run reason, naming the instruction.
EvaluateFn CannotRunEvaluator();

// Reads a scalar integer operand (dynamic-slice indices, branch index, ...).
int64_t ScalarAsInt64(const Literal& literal);

// The evaluator was handed one value per operand, each of the operand's
// declared shape (guards evaluators against a mismatched caller).
absl::Status ExpectOperandValues(const Instruction& inst,
                                 absl::Span<const Literal* const> operands);

// --- Reducer helpers (reduce, reduce-window, scatter, all-reduce, ...). ---

// If `computation` is exactly `ROOT op(parameter(0), parameter(1))` (either
// order) on two scalars of one type, with op one of add, multiply, maximum,
// minimum, or the bitwise and, or, xor on integers or pred, returns op. The
// one recogniser of plain reducers: evaluators then combine elements
// directly instead of calling the interpreter once per element (reducing 1M
// elements must be fast), the runtime picks its collective's reduction, and
// autodiff its rule.
std::optional<Opcode> MatchBinaryReducer(const Computation& computation);

// dst[dst_index] = op(dst[dst_index], src[src_index]) for arrays of one
// element type, with `op` as returned by MatchBinaryReducer. Gives the same
// bits as evaluating the computation (f16/bf16 round after the op, integers
// wrap, maximum/minimum propagate NaN).
void ApplyBinaryReducer(Opcode op, Literal& dst, int64_t dst_index, const Literal& src,
                        int64_t src_index);

// The identity of a binary reducer `op` (as MatchBinaryReducer returns it)
// on scalars of `type`: -0 for a floating-point add (x + -0 is x, -0 too), 0
// for an integer one, 1 for multiply, the lowest value (-inf) for maximum
// and the highest (inf) for minimum; none for other ops, pred, complex
// values, sub-byte integers and 8-bit floats.
std::optional<Literal> BinaryReducerIdentity(Opcode op, PrimitiveType type);

// Element `index` of the array `literal` as a scalar literal.
Literal ScalarAt(const Literal& literal, int64_t index);

// Calls `reducer` on the scalars (acc_0..acc_{n-1}, x_0..x_{n-1}) and stores
// its result (a scalar when n == 1, else an n-tuple of scalars) in `acc`.
absl::Status CallScalarReducer(EvalContext& ctx, const Computation& reducer,
                               std::vector<Literal>& acc, absl::Span<const Literal> xs);

}  // namespace sharc::hlo
