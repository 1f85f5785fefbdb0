// Collectives across MPI processes (`mpirun -np R sharc run --devices N`):
// process r hosts devices [r*N/R, (r+1)*N/R), each on its own thread. A
// group whose members all live in this process runs on the in-process
// communicator unchanged. Otherwise the process's members meet in one
// shared-memory rendezvous, and its first member (the group's leader here)
// alone talks MPI for all of them, on a communicator made for that group
// (created on first use with MPI_Comm_create_group, then cached):
// - a fingerprint (program, collective, sequence, group, shapes) goes to
//   every peer process first, so a mismatch or a peer that never comes is
//   reported, naming the collective and the devices, instead of exchanging
//   wrong data or hanging;
// - integer/pred all-reduce: the leader folds its members' inputs, then
//   MPI_Iallreduce combines the processes' partial results (exact in any
//   order);
// - float (and 8/16-bit integer sum/product) all-reduce and all-gather: the
//   leaders exchange their members' inputs with MPI_Iallgatherv and every
//   process folds or copies them in group-member order itself, so floats
//   give the same bits as an in-process run (MPI's own reduction order is
//   its own);
// - reduce-scatter and all-to-all: MPI_Ialltoallv carries to each process
//   only the chunks its members need, which it then folds (in member order)
//   or places;
// - collective-permute: MPI_Isend/MPI_Irecv for each pair crossing processes.
// Every MPI wait is non-blocking and polled against the collective timeout;
// communicator creation runs under the MpiWatchdog. Built only with MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/communicator.h"
#include "runtime/in_process_communicator.h"

namespace sharc::runtime {

struct MpiGroup;           // mpi_group_exchange.h
class MpiGroupExchange;    // mpi_group_exchange.h

struct MpiOptions {
  // Devices across all processes; a multiple of the process count.
  int64_t num_devices = 1;
  // Every collective (and communicator creation) fails after this long.
  absl::Duration timeout = absl::Seconds(60);
  // Identifies the per-device program: processes running different programs
  // fail at their first cross-process collective with a clear message.
  uint64_t program_fingerprint = 0;
  // For this process's devices (the timeout is taken from above).
  InProcessOptions local;
};

class MpiCommunicator final : public Communicator {
 public:
  // Collective over MPI_COMM_WORLD: every process calls it, in the same
  // order relative to other communicators (it duplicates the world
  // communicator). MPI must be initialised (InitMpi).
  static absl::StatusOr<std::unique_ptr<MpiCommunicator>> Create(const MpiOptions& options);
  ~MpiCommunicator() override;

  int64_t num_devices() const override { return options_.num_devices; }
  int64_t first_local_device() const { return first_local_; }
  int64_t num_local_devices() const { return num_local_; }
  int process() const { return rank_; }
  int num_processes() const { return size_; }

  absl::Status AllReduce(int64_t device, const CollectiveFingerprint& fingerprint,
                         absl::Span<const int64_t> group, ReductionKind kind, const Buffer& input,
                         Buffer& output) override;
  absl::Status AllGather(int64_t device, const CollectiveFingerprint& fingerprint,
                         absl::Span<const int64_t> group, int64_t dim, const Buffer& input,
                         Buffer& output) override;
  absl::Status ReduceScatter(int64_t device, const CollectiveFingerprint& fingerprint,
                             absl::Span<const int64_t> group, ReductionKind kind, int64_t dim,
                             const Buffer& input, Buffer& output) override;
  absl::Status AllToAll(int64_t device, const CollectiveFingerprint& fingerprint,
                        absl::Span<const int64_t> group, int64_t dim, const Buffer& input,
                        Buffer& output) override;
  absl::Status CollectivePermute(int64_t device, const CollectiveFingerprint& fingerprint,
                                 absl::Span<const std::pair<int64_t, int64_t>> pairs,
                                 const Buffer& input, Buffer& output) override;

  void Abort(int64_t device, const absl::Status& reason) override;
  void MarkFinished(int64_t device) override;
  absl::Status failure() const override;

  struct State;  // MPI handles and the device groups, kept out of this header

 private:
  MpiCommunicator(const MpiOptions& options, int rank, int size);
  absl::StatusOr<MpiGroup*> FindGroup(int64_t device, absl::Span<const int64_t> group);
  // The preamble every collective shares: `device` is hosted here and
  // `group` is valid (failures name the collective and abort the local
  // rendezvous). The caller then runs an all-local group in-process.
  absl::StatusOr<MpiGroup*> EnterCollective(int64_t device, const CollectiveFingerprint& fingerprint,
                                            absl::Span<const int64_t> group);
  // What every cross-process collective does around its own exchange: check
  // the device's place in `members`, make the fingerprint header, meet the
  // process's members in one led rendezvous, and in the leader open the MPI
  // step (fingerprints to every peer process first) before `exchange` runs.
  absl::Status RunAcrossProcesses(
      int64_t device, const CollectiveFingerprint& fingerprint, MpiGroup& group,
      absl::Span<const int64_t> members, uint64_t tag, const Buffer& input, Buffer& output,
      absl::FunctionRef<absl::Status(MpiGroupExchange&, const InProcessCommunicator::Round&)>
          exchange);
  absl::Status CheckLocalDevice(int64_t device) const;
  // Fails `device`'s call (and the local rendezvous) with `status`, prefixed
  // with the collective.
  absl::Status LocalError(int64_t device, const CollectiveFingerprint& fingerprint,
                          const absl::Status& status);

  const MpiOptions options_;
  const int rank_;
  const int size_;
  const int64_t first_local_;
  const int64_t num_local_;
  // Device ids are global here too: local devices use only their own slots.
  InProcessCommunicator local_;
  std::unique_ptr<State> state_;
};

}  // namespace sharc::runtime
