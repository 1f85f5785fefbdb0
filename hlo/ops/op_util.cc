#include "hlo/ops/op_util.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "hlo/ir/computation.h"

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

}  // namespace sharc::hlo
