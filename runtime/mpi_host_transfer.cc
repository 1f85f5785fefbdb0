#include "runtime/mpi_host_transfer.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <functional>

#include "hlo/base/status_macros.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/mpi_session.h"
#include "runtime/mpi_watchdog.h"

namespace sharc::runtime {
namespace {

// Messages are cut into pieces an int count can describe.
constexpr int64_t kPieceBytes = int64_t{1} << 30;

void ForEachArray(Buffer& buffer, const std::function<void(Buffer&)>& fn) {
  if (buffer.is_tuple()) {
    for (int64_t i = 0; i < buffer.tuple_size(); ++i) ForEachArray(buffer.mutable_element(i), fn);
  } else {
    fn(buffer);
  }
}

std::vector<Buffer*> Arrays(std::vector<Buffer>& buffers) {
  std::vector<Buffer*> arrays;
  for (Buffer& b : buffers) ForEachArray(b, [&](Buffer& a) { arrays.push_back(&a); });
  return arrays;
}

}  // namespace

absl::Status CheckSameProgramEverywhere(uint64_t program_fingerprint, absl::Duration timeout) {
  const int size = MpiSize();
  std::vector<uint64_t> all(static_cast<size_t>(size));
  {
    MpiWatchdogGuard guard(timeout, absl::StrCat("process ", MpiRank(),
                                                 ": waiting for the other processes to start the "
                                                 "run timed out after ",
                                                 absl::FormatDuration(timeout)));
    int rc = MPI_Allgather(&program_fingerprint, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T,
                           MPI_COMM_WORLD);
    if (absl::Status st = MpiCallStatus(rc, "MPI_Allgather"); !st.ok()) return st;
  }
  std::vector<int> differ;
  for (int p = 0; p < size; ++p) {
    if (all[static_cast<size_t>(p)] != all[0]) differ.push_back(p);
  }
  if (differ.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("the MPI processes run different programs: process",
                   differ.size() == 1 ? " " : "es ", absl::StrJoin(differ, ","),
                   " partitioned a per-device module that differs from process 0's "
                   "(same FILE, flags and sharc on every process?)"));
}

absl::Status BroadcastBuffers(std::vector<Buffer>& buffers, absl::Duration timeout) {
  MpiWatchdogGuard guard(
      timeout, absl::StrCat("process ", MpiRank(), ": broadcasting the inputs timed out after ",
                            absl::FormatDuration(timeout)));
  for (Buffer* a : Arrays(buffers)) {
    uint8_t* data = static_cast<uint8_t*>(a->data());
    for (int64_t at = 0; at < a->size_bytes(); at += kPieceBytes) {
      const int count = static_cast<int>(std::min(kPieceBytes, a->size_bytes() - at));
      int rc = MPI_Bcast(data + at, count, MPI_BYTE, 0, MPI_COMM_WORLD);
      if (absl::Status st = MpiCallStatus(rc, "MPI_Bcast of the inputs"); !st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Buffer>> GatherBuffersToFirst(const std::vector<Buffer>& local,
                                                         absl::Duration timeout) {
  const int rank = MpiRank(), size = MpiSize();
  MpiWatchdogGuard guard(timeout,
                         absl::StrCat("process ", rank, ": gathering the results timed out after ",
                                      absl::FormatDuration(timeout)));
  constexpr int kResultTag = 7;
  if (rank != 0) {
    std::vector<Buffer> mine = local;  // handles only; the arrays are shared
    for (Buffer* a : Arrays(mine)) {
      const uint8_t* data = static_cast<const uint8_t*>(a->data());
      for (int64_t at = 0; at < a->size_bytes(); at += kPieceBytes) {
        const int count = static_cast<int>(std::min(kPieceBytes, a->size_bytes() - at));
        int rc = MPI_Send(data + at, count, MPI_BYTE, 0, kResultTag, MPI_COMM_WORLD);
        if (absl::Status st = MpiCallStatus(rc, "MPI_Send of the results"); !st.ok()) return st;
      }
    }
    return std::vector<Buffer>();
  }
  std::vector<Buffer> all = local;
  for (int p = 1; p < size; ++p) {
    std::vector<Buffer> theirs;
    for (const Buffer& b : local) {
      ASSIGN_OR_RETURN(Buffer copy, Buffer::Allocate(b.shape()));
      theirs.push_back(std::move(copy));
    }
    for (Buffer* a : Arrays(theirs)) {
      uint8_t* data = static_cast<uint8_t*>(a->data());
      for (int64_t at = 0; at < a->size_bytes(); at += kPieceBytes) {
        const int count = static_cast<int>(std::min(kPieceBytes, a->size_bytes() - at));
        int rc =
            MPI_Recv(data + at, count, MPI_BYTE, p, kResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (absl::Status st = MpiCallStatus(rc, "MPI_Recv of the results"); !st.ok()) return st;
      }
    }
    for (Buffer& b : theirs) all.push_back(std::move(b));
  }
  return all;
}

}  // namespace sharc::runtime
