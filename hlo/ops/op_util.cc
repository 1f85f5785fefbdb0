#include "hlo/ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>

#include "absl/strings/str_join.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/narrow_types.h"

namespace sharc::hlo {

absl::Status ExpectArrayOperand(const Instruction& inst, int64_t i) {
  if (i >= inst.operand_count()) {
    return OpError(inst, "expects an operand ", i);
  }
  if (!inst.operand(i)->shape().is_array()) {
    return OpError(inst, "operand ", i, " must be an array, got ",
                   inst.operand(i)->shape().ToString());
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> ExpectSameDimsOperands(const Instruction& inst) {
  if (inst.operand_count() == 0) return OpError(inst, "expects operands");
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    absl::Status st = ExpectArrayOperand(inst, i);
    if (!st.ok()) return st;
  }
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (s.dims() != first.dims()) {
      return OpError(inst, "operand shapes ", first.ToString(), " and ", s.ToString(),
                     " are not compatible");
    }
  }
  return first;
}

absl::Status ExpectValidDims(const Instruction& inst, absl::Span<const int64_t> dims,
                             int64_t rank, std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return OpError(inst, what, " dimension ", d, " is out of range for rank ", rank);
    }
    if (seen[d]) return OpError(inst, what, " dimension ", d, " appears twice");
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::Status ExpectPermutation(const Instruction& inst, absl::Span<const int64_t> perm,
                               int64_t rank, std::string_view what) {
  if (static_cast<int64_t>(perm.size()) != rank) {
    return OpError(inst, what, " {", absl::StrJoin(perm, ","), "} is not a permutation of 0..",
                   rank - 1);
  }
  absl::Status st = ExpectValidDims(inst, perm, rank, what);
  if (!st.ok()) {
    return OpError(inst, what, " {", absl::StrJoin(perm, ","), "} is not a permutation of 0..",
                   rank - 1);
  }
  return absl::OkStatus();
}

EvaluateFn CannotRunEvaluator() {
  return [](const Instruction& inst, absl::Span<const Literal* const>,
            EvalContext&) -> absl::StatusOr<Literal> {
    return absl::UnimplementedError(absl::StrCat(OpcodeName(inst.opcode()), " cannot run: ",
                                                 GetOpDef(inst.opcode()).cannot_run, ", in ",
                                                 inst.Describe()));
  };
}

absl::Status ExpectDeclared(const Instruction& inst, const Shape& inferred) {
  if (inst.shape() != inferred) {
    return OpError(inst, "declares ", inst.shape().ToString(), " but its operands imply ",
                   inferred.ToString());
  }
  return absl::OkStatus();
}

absl::Status ExpectComputationSignature(const Instruction& inst, const Computation* computation,
                                        std::string_view role,
                                        absl::Span<const Shape> parameters, const Shape* result) {
  if (computation == nullptr) return OpError(inst, "is missing its ", role, " computation");
  if (computation->num_parameters() != static_cast<int64_t>(parameters.size())) {
    return OpError(inst, role, " computation '", computation->name(), "' takes ",
                   computation->num_parameters(), " parameters, expected ", parameters.size());
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    const Instruction* p = computation->parameter(static_cast<int64_t>(i));
    if (p == nullptr) {
      return OpError(inst, role, " computation '", computation->name(), "' has no parameter ", i);
    }
    if (p->shape() != parameters[i]) {
      return OpError(inst, role, " computation '", computation->name(), "' parameter ", i,
                     " is ", p->shape().ToString(), ", expected ", parameters[i].ToString());
    }
  }
  if (result != nullptr && computation->root() != nullptr &&
      computation->root()->shape() != *result) {
    return OpError(inst, role, " computation '", computation->name(), "' returns ",
                   computation->root()->shape().ToString(), ", expected ", result->ToString());
  }
  return absl::OkStatus();
}

int64_t ScalarAsInt64(const Literal& literal) { return literal.GetAsInt64(0); }

absl::Status ExpectOperandValues(const Instruction& inst,
                                 absl::Span<const Literal* const> operands) {
  if (static_cast<int64_t>(operands.size()) != inst.operand_count()) {
    return OpError(inst, "was evaluated with ", operands.size(), " values for ",
                   inst.operand_count(), " operands");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i] == nullptr ||
        operands[i]->shape() != inst.operand(static_cast<int64_t>(i))->shape()) {
      return OpError(inst, "was evaluated with a value of shape ",
                     operands[i] == nullptr ? std::string("<null>")
                                            : operands[i]->shape().ToString(),
                     " for operand ", i, " of shape ",
                     inst.operand(static_cast<int64_t>(i))->shape().ToString());
    }
  }
  return absl::OkStatus();
}

std::optional<Opcode> MatchBinaryReducer(const Computation& computation) {
  const Instruction* root = computation.root();
  if (root == nullptr || computation.num_parameters() != 2 || root->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* p0 = computation.parameter(0);
  const Instruction* p1 = computation.parameter(1);
  if (p0 == nullptr || p1 == nullptr) return std::nullopt;
  const Shape& s = root->shape();
  if (!s.is_array() || !s.is_scalar() || p0->shape() != s || p1->shape() != s) {
    return std::nullopt;
  }
  // All matched ops are commutative, so parameter order does not matter.
  bool params = (root->operand(0) == p0 && root->operand(1) == p1) ||
                (root->operand(0) == p1 && root->operand(1) == p0);
  if (!params) return std::nullopt;
  if (IsComplex(s.type()) && root->opcode() != Opcode::kAdd &&
      root->opcode() != Opcode::kMultiply) {
    return std::nullopt;  // not defined on complex values: the evaluator says so
  }
  switch (root->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return root->opcode();
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      // Bitwise ops are not defined on floats; leave those to the evaluator
      // (which reports the error).
      if (IsFloatingPoint(s.type())) return std::nullopt;
      return root->opcode();
    default:
      return std::nullopt;
  }
}

namespace {

template <typename T>
T CombineScalars(Opcode op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kAdd:
      case Opcode::kMaximum:
      case Opcode::kOr:
        return a || b;
      case Opcode::kXor:
        return a != b;
      default:
        return a && b;
    }
  } else if constexpr (kIsLowPrecisionFloat<T>) {
    return T(CombineScalars<float>(op, static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case Opcode::kAdd:
        return a + b;
      case Opcode::kMultiply:
        return a * b;
      case Opcode::kMaximum:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        return a > b ? a : b;
      case Opcode::kMinimum:
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
        return a < b ? a : b;
      default:
        return a;
    }
  } else {
    // Unsigned arithmetic wraps without undefined behaviour.
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case Opcode::kAdd:
        return static_cast<T>(static_cast<uint64_t>(static_cast<U>(a)) +
                              static_cast<uint64_t>(static_cast<U>(b)));
      case Opcode::kMultiply:
        return static_cast<T>(static_cast<uint64_t>(static_cast<U>(a)) *
                              static_cast<uint64_t>(static_cast<U>(b)));
      case Opcode::kMaximum:
        return a > b ? a : b;
      case Opcode::kMinimum:
        return a < b ? a : b;
      case Opcode::kAnd:
        return static_cast<T>(a & b);
      case Opcode::kOr:
        return static_cast<T>(a | b);
      case Opcode::kXor:
        return static_cast<T>(a ^ b);
      default:
        return a;
    }
  }
}

}  // namespace

void ApplyBinaryReducer(Opcode op, Literal& dst, int64_t dst_index, const Literal& src,
                        int64_t src_index) {
  // Complex values add or multiply: MatchBinaryReducer matches nothing else
  // on them.
  auto combine_complex = [&](auto* d, const auto* x) {
    if (op == Opcode::kMultiply) {
      d[dst_index] *= x[src_index];
    } else {
      d[dst_index] += x[src_index];
    }
  };
  if (dst.shape().type() == PrimitiveType::kC64) {
    combine_complex(dst.data<std::complex<float>>().data(),
                    src.data<std::complex<float>>().data());
    return;
  }
  if (dst.shape().type() == PrimitiveType::kC128) {
    combine_complex(dst.data<std::complex<double>>().data(),
                    src.data<std::complex<double>>().data());
    return;
  }
  DispatchPrimitiveType(dst.shape().type(), [&](auto t) {
    using T = decltype(t);
    T& d = dst.data<T>()[dst_index];
    d = CombineScalars<T>(op, d, src.data<T>()[src_index]);
  });
}

std::optional<Literal> BinaryReducerIdentity(Opcode op, PrimitiveType type) {
  if (type == PrimitiveType::kPred || IsComplex(type) || IsSubByteInteger(type) ||
      (IsFloatingPoint(type) && ByteWidth(type) < 2)) {
    return std::nullopt;
  }
  Literal value(Shape::Scalar(type));
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case Opcode::kAdd:
      if (IsFloatingPoint(type)) value.SetFromDouble(0, -0.0);
      return value;
    case Opcode::kMultiply:
      value.SetFromInt64(0, 1);
      return value;
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      const bool lowest = op == Opcode::kMaximum;
      if (IsFloatingPoint(type)) {
        value.SetFromDouble(0, lowest ? -inf : inf);
        return value;
      }
      DispatchPrimitiveType(type, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          value.template data<T>()[0] =
              lowest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
        }
      });
      return value;
    }
    default:
      return std::nullopt;
  }
}

Literal ScalarAt(const Literal& literal, int64_t index) {
  Literal out(Shape::Scalar(literal.shape().type()));
  CopyElement(literal, index, out, 0);
  return out;
}

absl::Status CallScalarReducer(EvalContext& ctx, const Computation& reducer,
                               std::vector<Literal>& acc, absl::Span<const Literal> xs) {
  std::vector<const Literal*> args;
  args.reserve(acc.size() + xs.size());
  for (const Literal& a : acc) args.push_back(&a);
  for (const Literal& x : xs) args.push_back(&x);
  absl::StatusOr<Literal> result = ctx.Call(reducer, args);
  if (!result.ok()) return result.status();
  if (acc.size() == 1 && !result->is_tuple()) {
    if (!result->shape().is_scalar() || result->shape().type() != acc[0].shape().type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reducer '", reducer.name(), "' returned ", result->shape().ToString(),
                       ", expected ", acc[0].shape().ToString()));
    }
    acc[0] = *std::move(result);
    return absl::OkStatus();
  }
  if (!result->is_tuple() || result->elements().size() != acc.size()) {
    return absl::InvalidArgumentError(absl::StrCat("reducer '", reducer.name(), "' returned ",
                                                   result->shape().ToString(), ", expected ",
                                                   acc.size(), " scalars"));
  }
  for (size_t i = 0; i < acc.size(); ++i) {
    Literal& e = result->elements()[i];
    if (e.is_tuple() || !e.shape().is_scalar() || e.shape().type() != acc[i].shape().type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("reducer '", reducer.name(), "' returned ", result->shape().ToString(),
                       " whose element ", i, " is not a ", acc[i].shape().ToString()));
    }
    acc[i] = std::move(e);
  }
  return absl::OkStatus();
}

}  // namespace sharc::hlo
