#include "runtime/communicator_checks.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/reduction.h"

namespace sharc::runtime {
namespace {

absl::Status CheckArrays(const Buffer& input, const Buffer& output) {
  if (!input.valid() || !output.valid() || input.is_tuple() || output.is_tuple()) {
    return absl::InvalidArgumentError(absl::StrCat("collectives take array buffers, got ",
                                                   input.shape().ToString(), " -> ",
                                                   output.shape().ToString()));
  }
  if (input.type() != output.type()) {
    return absl::InvalidArgumentError(absl::StrCat("input is ", input.shape().ToString(),
                                                   " but output is ", output.shape().ToString(),
                                                   "; element types must agree"));
  }
  return absl::OkStatus();
}

absl::Status CheckDim(int64_t dim, const hlo::Shape& shape) {
  if (dim < 0 || dim >= shape.rank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension ", dim, " is out of range for ", shape.ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckSameShape(const Buffer& input, const Buffer& output) {
  if (input.shape() != output.shape()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "output ", output.shape().ToString(), " differs from input ", input.shape().ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckDivisible(int64_t group_size, int64_t dim, const hlo::Shape& shape) {
  if (shape.dim(dim) % group_size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dim ", dim, " of ", shape.ToString(), " is not divisible by the group size ", group_size));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateAllReduce(ReductionKind kind, const Buffer& input, const Buffer& output) {
  if (absl::Status st = CheckArrays(input, output); !st.ok()) return st;
  if (absl::Status st = CheckSameShape(input, output); !st.ok()) return st;
  return CheckReduction(input.type(), kind);
}

absl::Status ValidateAllGather(int64_t group_size, int64_t dim, const Buffer& input,
                               const Buffer& output) {
  if (absl::Status st = CheckArrays(input, output); !st.ok()) return st;
  if (absl::Status st = CheckDim(dim, input.shape()); !st.ok()) return st;
  hlo::Shape expected = input.shape();
  expected.mutable_dims()[static_cast<size_t>(dim)] *= group_size;
  if (output.shape() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gathering ", input.shape().ToString(), " over ", group_size, " devices along dim ", dim,
        " gives ", expected.ToString(), ", but the output is ", output.shape().ToString()));
  }
  return absl::OkStatus();
}

absl::Status ValidateReduceScatter(int64_t group_size, ReductionKind kind, int64_t dim,
                                   const Buffer& input, const Buffer& output) {
  if (absl::Status st = CheckArrays(input, output); !st.ok()) return st;
  if (absl::Status st = CheckDim(dim, input.shape()); !st.ok()) return st;
  if (absl::Status st = CheckReduction(input.type(), kind); !st.ok()) return st;
  if (absl::Status st = CheckDivisible(group_size, dim, input.shape()); !st.ok()) return st;
  hlo::Shape expected = input.shape();
  expected.mutable_dims()[static_cast<size_t>(dim)] /= group_size;
  if (output.shape() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "scattering ", input.shape().ToString(), " over ", group_size, " devices along dim ", dim,
        " gives ", expected.ToString(), ", but the output is ", output.shape().ToString()));
  }
  return absl::OkStatus();
}

absl::Status ValidateAllToAll(int64_t group_size, int64_t dim, const Buffer& input,
                              const Buffer& output) {
  if (absl::Status st = CheckArrays(input, output); !st.ok()) return st;
  if (absl::Status st = CheckDim(dim, input.shape()); !st.ok()) return st;
  if (absl::Status st = CheckDivisible(group_size, dim, input.shape()); !st.ok()) return st;
  return CheckSameShape(input, output);
}

absl::Status ValidateCollectivePermute(const Buffer& input, const Buffer& output) {
  if (absl::Status st = CheckArrays(input, output); !st.ok()) return st;
  return CheckSameShape(input, output);
}

absl::StatusOr<int64_t> PositionInGroup(int64_t device, absl::Span<const int64_t> group) {
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] == device) return static_cast<int64_t>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("device ", device, " is not in its group ", GroupString(group)));
}

std::string GroupString(absl::Span<const int64_t> group) {
  return absl::StrCat("{", absl::StrJoin(group, ","), "}");
}

int64_t DimProduct(absl::Span<const int64_t> dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i];
  return p;
}

}  // namespace sharc::runtime
