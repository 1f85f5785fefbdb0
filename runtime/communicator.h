// The runtime's collective interface: all-reduce, all-gather, reduce-scatter,
// all-to-all and collective-permute over groups of device ids, as the SPMD
// partitioner emits them. Backends: InProcessCommunicator (device threads in
// one process, shared memory) and MpiCommunicator (devices spread over MPI
// processes; groups map to MPI communicators, built only with MPI).
//
// Contract every backend keeps (see ../shared/reference/ecosystem_reliability.md
// B7-B9):
// - Every call names its collective with a CollectiveFingerprint. All members
//   of a group must call with the same fingerprint (same opcode, name,
//   channel id, sequence number) and the same group, reduction, dimension and
//   input shape; otherwise every participant fails with a message naming both
//   sides.
// - Reductions combine contributions in group-member order, element by
//   element, so every member gets the same bits and a run is bitwise
//   repeatable (for a fixed group layout).
// - No call blocks forever: a peer that never arrives fails the call after the
//   backend's timeout with a message naming the collective, its sequence
//   number, the group and the missing devices; a device that fails (Abort)
//   wakes its peers with "device k failed: <reason>".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/opcode.h"
#include "runtime/buffer.h"

namespace sharc::runtime {

// How contributions combine. On pred, sum/max/or are "or" and prod/min/and
// are "and" (as the reference interpreter does); and/or are bitwise on
// integers and invalid on floats. f16/bf16 compute in f32 and round after
// every combination; integers wrap; max/min propagate NaN.
enum class ReductionKind { kSum, kProduct, kMax, kMin, kAnd, kOr };

const char* ReductionKindName(ReductionKind kind);

// The reduction a reducer computation performs, if it is a plain binary
// add/multiply/maximum/minimum/and/or of its two scalar parameters.
absl::StatusOr<ReductionKind> ReductionKindFromReducer(const hlo::Computation& reducer);

// Names one collective call. `name` must stay valid for the communicator's
// lifetime (instruction names and string literals do): peers may read it to
// report a mismatch.
struct CollectiveFingerprint {
  hlo::Opcode opcode = hlo::Opcode::kAllReduce;
  std::string_view name;
  int64_t channel_id = 0;  // 0: none
  // The device's count of collective calls so far; every member of a group
  // calls with the same number, and each device's numbers strictly increase.
  int64_t sequence = 0;

  // "all-reduce %ar.1 (channel_id=1, sequence 7)".
  std::string ToString() const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int64_t num_devices() const = 0;

  // `group` lists the participating device ids in member order; `device`
  // must be one of them. Every array buffer is dense row-major. Outputs are
  // preallocated by the caller with the result shape; they are fully written.

  // output = reduce(kind) over members of input; output shape == input shape.
  virtual absl::Status AllReduce(int64_t device, const CollectiveFingerprint& fingerprint,
                                 absl::Span<const int64_t> group, ReductionKind kind,
                                 const Buffer& input, Buffer& output) = 0;
  // output = concatenation along `dim` of the members' inputs, in member
  // order; output dim `dim` == group size x input dim `dim`.
  virtual absl::Status AllGather(int64_t device, const CollectiveFingerprint& fingerprint,
                                 absl::Span<const int64_t> group, int64_t dim,
                                 const Buffer& input, Buffer& output) = 0;
  // Member p gets chunk p (along `dim`) of the reduction over members; input
  // dim `dim` == group size x output dim `dim`.
  virtual absl::Status ReduceScatter(int64_t device, const CollectiveFingerprint& fingerprint,
                                     absl::Span<const int64_t> group, ReductionKind kind,
                                     int64_t dim, const Buffer& input, Buffer& output) = 0;
  // Input split into group-size chunks along `dim`; chunk j goes to member j;
  // member p's output chunk j is member j's input chunk p. Same shapes.
  virtual absl::Status AllToAll(int64_t device, const CollectiveFingerprint& fingerprint,
                                absl::Span<const int64_t> group, int64_t dim,
                                const Buffer& input, Buffer& output) = 0;
  // For each (source, target) pair, target's output = source's input;
  // devices that are no pair's target get zeros. Every device named in a pair
  // takes part; a device named in none returns zeros at once.
  virtual absl::Status CollectivePermute(int64_t device, const CollectiveFingerprint& fingerprint,
                                         absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                         const Buffer& input, Buffer& output) = 0;

  // Device `device` failed with `reason`: every pending and later call fails
  // with "device <device> failed: <reason>" instead of waiting for it.
  virtual void Abort(int64_t device, const absl::Status& reason) = 0;
  // Device `device` has finished its program: peers still waiting for it at
  // a collective fail at once ("device k finished without reaching ...").
  virtual void MarkFinished(int64_t device) = 0;
  // The first failure (timeout, mismatch, abort), or OK.
  virtual absl::Status failure() const = 0;
};

}  // namespace sharc::runtime
