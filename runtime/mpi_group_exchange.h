// The cross-process side of one device group's collective, as
// MpiCommunicator runs it: where the group's members live (MpiGroup), the
// fingerprint header every process's leader announces first
// (MpiCallHeader), and MpiGroupExchange, which makes the group's MPI
// communicator, exchanges and checks the headers, and moves the data with
// non-blocking MPI calls polled against the collective's deadline. Built
// only with MPI.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "runtime/buffer.h"
#include "runtime/communicator.h"
#include "runtime/in_process_communicator.h"

namespace sharc::runtime {

// Where a device group's members live and the group's MPI communicator.
struct MpiGroup {
  std::vector<int64_t> members;  // member order
  // Processes hosting members, ascending; rank i of `comm` is processes[i].
  std::vector<int> processes;
  int my_index = -1;
  // Per process index: the positions (in member order) of its members.
  std::vector<std::vector<int64_t>> positions;
  // This process's members, in member order.
  std::vector<int64_t> local_members;
  bool all_local = false;
  // Created and used only by this process's leader of the group (its first
  // member), one collective at a time: collectives of one group are ordered
  // the same way on every process, which MPI requires per communicator.
  MPI_Comm comm = MPI_COMM_NULL;

  // "devices 2,3 (process 1)" for the process at `index`.
  std::string DevicesOf(int index) const;
};

// The process-wide handles group communicators are made from.
struct MpiWorld {
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of MPI_COMM_WORLD
  MPI_Group group = MPI_GROUP_NULL;
  int tag_bound = 32767;  // MPI_TAG_UB
};

// What one process's leader announces before any data moves. Every field
// but `first_device` must agree across the group's processes.
struct MpiCallHeader {
  uint64_t program = 0;
  uint64_t call = 0;  // hash of the collective, its group, shapes and parameters
  int64_t sequence = 0;
  int64_t channel_id = 0;
  int64_t bytes = 0;
  int32_t opcode = 0;
  int32_t first_device = 0;
  char name[64] = {};
};

// `tag` separates kinds of collectives and their parameters (as the
// in-process communicator's tags do).
MpiCallHeader MakeCallHeader(uint64_t program, const CollectiveFingerprint& fp,
                             absl::Span<const int64_t> group, const Buffer& input,
                             const Buffer& output, uint64_t tag, int64_t first_device);

// Point-to-point tags on a group communicator: headers, and collective-
// permute's pair k at kMpiPermuteTagBase + k.
inline constexpr int kMpiHeaderTag = 1;
inline constexpr int kMpiPermuteTagBase = 2;

// The MPI type and op that give an integer or pred reduction exactly (in
// any order). False when MPI's reduction may not give our bits (floats,
// whose sums depend on the order; narrow integer sums, see the .cc).
bool ExactMpiReduction(hlo::PrimitiveType type, ReductionKind kind, MPI_Datatype* dt, MPI_Op* op);

// The mismatch-check tag of a collective-permute with these pairs.
uint64_t PermutePairsTag(absl::Span<const std::pair<int64_t, int64_t>> pairs);

// `n` as an MPI count, or an error naming `what`.
absl::StatusOr<int> MpiIntCount(int64_t n, std::string_view what);

// Copies `rows` rows of `row_bytes` between strided places.
void CopyStridedRows(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
                     int64_t rows, int64_t row_bytes);

// One collective's cross-process part, run by this process's leader of the
// group: the communicator, the fingerprint exchange, and waits polled
// against the collective's deadline.
class MpiGroupExchange {
 public:
  MpiGroupExchange(const MpiWorld& world, MpiGroup& group, const CollectiveFingerprint& fp,
                   const MpiCallHeader& header, int64_t device, absl::Duration timeout,
                   InProcessCommunicator& local);

  MPI_Comm comm() const { return group_.comm; }

  // Makes the group's communicator on first use and checks that every peer
  // process runs the same program and the same collective.
  absl::Status Begin();
  // Every member's `bytes`-byte input, in member order: ours from the
  // round, the others' received with MPI_Iallgatherv.
  absl::StatusOr<std::vector<const void*>> GatherInputs(const InProcessCommunicator::Round& r,
                                                        int64_t bytes);
  // For splitting collectives (reduce-scatter, all-to-all): every member's
  // input is cut into group-size chunks along a dimension (`outer` rows of
  // `chunk_bytes` per chunk), and this process needs chunk p of every
  // member's input only for its own members p; MPI_Ialltoallv carries
  // exactly those. Returns pieces[j * r.size + k] = member j's chunk for our
  // k-th member, each `outer * chunk_bytes` contiguous bytes.
  absl::StatusOr<std::vector<const uint8_t*>> ExchangeChunks(const InProcessCommunicator::Round& r,
                                                             int64_t outer, int64_t chunk_bytes);
  // Waits for data requests of peers that have all announced themselves. A
  // failure here ends the whole job (see the .cc); it returns only on
  // success.
  absl::Status WaitData(std::vector<MPI_Request>& requests, std::string_view call);

 private:
  absl::Status CreateComm();
  absl::Status ExchangeHeaders();
  absl::Status Poll(std::vector<MPI_Request>& requests, std::vector<bool>& pending);

  const MpiWorld& world_;
  MpiGroup& group_;
  const CollectiveFingerprint& fp_;
  const MpiCallHeader& header_;
  const int64_t device_;
  const absl::Duration timeout_;
  InProcessCommunicator& local_;
  const std::chrono::steady_clock::time_point deadline_;
  std::vector<uint8_t> packed_;
  std::vector<uint8_t> received_;
};

}  // namespace sharc::runtime
