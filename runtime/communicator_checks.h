// The argument checks every Communicator backend makes before a collective:
// array buffers, matching element types, a valid dimension and the result
// shape the op implies. Shared so that the in-process and MPI backends
// refuse the same calls with the same messages.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/buffer.h"
#include "runtime/communicator.h"

namespace sharc::runtime {

absl::Status ValidateAllReduce(ReductionKind kind, const Buffer& input, const Buffer& output);
absl::Status ValidateAllGather(int64_t group_size, int64_t dim, const Buffer& input,
                               const Buffer& output);
absl::Status ValidateReduceScatter(int64_t group_size, ReductionKind kind, int64_t dim,
                                   const Buffer& input, const Buffer& output);
absl::Status ValidateAllToAll(int64_t group_size, int64_t dim, const Buffer& input,
                              const Buffer& output);
absl::Status ValidateCollectivePermute(const Buffer& input, const Buffer& output);

// Position of `device` in `group`, or an error naming both.
absl::StatusOr<int64_t> PositionInGroup(int64_t device, absl::Span<const int64_t> group);

// "{0,2,1}".
std::string GroupString(absl::Span<const int64_t> group);

// Product of dims[from, to).
int64_t DimProduct(absl::Span<const int64_t> dims, size_t from, size_t to);

}  // namespace sharc::runtime
