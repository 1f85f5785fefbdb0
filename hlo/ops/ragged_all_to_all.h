// ragged-all-to-all's transfers, checked in one place for the interpreter's
// evaluator (collective_ops.cc) and the runtime's (runtime/executable.cc):
// member j sends its rows [in_offset, in_offset + size) to rows starting at
// out_offset of a member's output, once per update.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace sharc::hlo {

// An error unless the rows lie inside both arrays. Written so that no sum
// can overflow (offsets and sizes are s64 operands).
inline absl::Status CheckRaggedRows(int64_t sender, int64_t in_offset, int64_t size,
                                    int64_t in_rows, int64_t out_offset, int64_t out_rows) {
  if (size >= 0 && in_offset >= 0 && out_offset >= 0 && in_offset <= in_rows &&
      out_offset <= out_rows && size <= in_rows - in_offset && size <= out_rows - out_offset) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "device ", sender, " sends ", size, " rows from row ", in_offset, " of its ", in_rows,
      " to rows starting at ", out_offset, " of ", out_rows));
}

// How many updates each member sends to each member: the offsets hold one
// run of them per member (update p * U + i goes to member p, as XLA's
// runtime takes it); an error unless their count is a multiple of the group.
inline absl::StatusOr<int64_t> UpdatesPerMember(int64_t updates, int64_t group_size) {
  if (group_size > 0 && updates % group_size == 0) return updates / group_size;
  return absl::InvalidArgumentError(absl::StrCat(
      "ragged-all-to-all has ", updates, " offsets for a group of ", group_size,
      " devices (not a whole number of updates per device)"));
}

}  // namespace sharc::hlo
