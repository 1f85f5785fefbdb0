#include "runtime/communicator.h"

#include "absl/strings/str_cat.h"
#include "hlo/ops/op_util.h"

namespace sharc::runtime {

std::string CollectiveFingerprint::ToString() const {
  std::string s = absl::StrCat(hlo::OpcodeName(opcode), " %",
                               absl::string_view(name.data(), name.size()), " (");
  if (channel_id != 0) absl::StrAppend(&s, "channel_id=", channel_id, ", ");
  absl::StrAppend(&s, "sequence ", sequence, ")");
  return s;
}

absl::StatusOr<ReductionKind> ReductionKindFromReducer(const hlo::Computation& reducer) {
  std::optional<hlo::Opcode> op = hlo::MatchBinaryReducer(reducer);
  if (!op.has_value()) {
    return absl::UnimplementedError(absl::StrCat(
        "reducer '", reducer.name(),
        "' is not a plain add/multiply/maximum/minimum/and/or of its two parameters; the runtime's "
        "collectives support only those"));
  }
  switch (*op) {
    case hlo::Opcode::kAdd: return ReductionKind::kSum;
    case hlo::Opcode::kMultiply: return ReductionKind::kProduct;
    case hlo::Opcode::kMaximum: return ReductionKind::kMax;
    case hlo::Opcode::kMinimum: return ReductionKind::kMin;
    case hlo::Opcode::kAnd: return ReductionKind::kAnd;
    case hlo::Opcode::kOr: return ReductionKind::kOr;
    default: break;
  }
  return absl::UnimplementedError(absl::StrCat(
      "reducer '", reducer.name(), "' is a plain ", hlo::OpcodeName(*op),
      ", which the runtime's collectives do not support (add/multiply/maximum/minimum/and/or)"));
}

}  // namespace sharc::runtime
