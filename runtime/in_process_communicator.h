// Collectives between N device threads of one process, through shared
// memory and without needless copies: each device publishes pointers to its
// input and output, peers read the input in place and write results straight
// into the outputs. An all-reduce is split so that member p reduces the p-th
// slice of the elements (folding contributions in member order) and writes
// it into every member's output: every element is combined once, in one
// fixed order, so all members get the same bits on every run.
//
// Small inputs (up to kEagerBytes) take one rendezvous: the device copies
// its input into one of two staging buffers it owns, announces the round in
// its own cache line (a progress word that only grows) and computes its own
// output from the peers' staging buffers as soon as all have announced;
// then it marks the round read in the same word. A staging buffer is
// rewritten two rounds later, after its readers have marked it read. No
// shared counter and no per-peer acknowledgement is touched, so a small
// all-reduce moves only the announcements and the staged data between
// cores (a small all-reduce has every member reduce all inputs itself).
// Larger inputs are used in place: two counters per group (arrivals,
// departures), each packed with the round's sequence number, and a second
// rendezvous so that no buffer is released while a peer still reads it.
// A waiting device spins briefly, yields, then blocks on a condition
// variable, so more devices than cores do not starve each other; every wait
// has the configured timeout, and a failure (timeout, fingerprint mismatch,
// Abort) poisons the communicator so that all peers wake with the same
// error. A device that has announced its contribution never leaves while a
// peer may still touch its buffers: once a round is complete every member
// finishes it (eager peers only read staging, which the communicator owns).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "runtime/communicator.h"

namespace sharc::runtime {

struct InProcessOptions {
  // A collective whose peers do not all arrive within this time fails.
  absl::Duration timeout = absl::Seconds(60);
  // The longest a waiting device spins before it yields and then blocks.
  // Negative = automatic: 50 us when there are no more devices than cores,
  // 2 us otherwise (spinning on a core another device needs only delays that
  // device). Each device adapts its spin below this bound: it halves after a
  // wait that spinning did not end (the peer was not running) and doubles
  // after one it did, so a loaded machine quickly stops burning time.
  absl::Duration spin = absl::Microseconds(-1);
  // OpenMP threads one device may use for the element loops of a single
  // collective (1 = the device thread alone). DeviceMesh sets it to
  // max(1, cores / devices) so that device threads and these loops together
  // never exceed the cores.
  int threads_per_device = 1;
};

class InProcessCommunicator final : public Communicator {
 public:
  // Inputs up to this size take the one-rendezvous eager path.
  static constexpr int64_t kEagerBytes = 64 * 1024;

  explicit InProcessCommunicator(int64_t num_devices, InProcessOptions options = {});
  ~InProcessCommunicator() override;

  int64_t num_devices() const override { return num_devices_; }
  const InProcessOptions& options() const { return options_; }

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

  // What a member sees of one complete round: every member's published
  // input and output, in member order.
  struct Round {
    int64_t position = 0;
    int64_t size = 0;
    const void* const* inputs = nullptr;
    // Every member's output; in an eager round (small inputs, copied to
    // staging) only our own, outputs[position], may be written.
    void* const* outputs = nullptr;
    bool eager = false;
  };

  // For a backend layered on top of this one (the MPI communicator): one
  // rendezvous of `group` in which only the first member runs `lead`, seeing
  // every member's input and output (all writable), while the others wait
  // until it returns. A failure from `lead` fails every member's call. `tag`
  // separates kinds of calls in the mismatch check, as the ops' own tags do.
  absl::Status RunLed(int64_t device, const CollectiveFingerprint& fingerprint,
                      absl::Span<const int64_t> group, uint64_t tag, const Buffer& input,
                      Buffer& output, absl::FunctionRef<absl::Status(const Round&)> lead);

 private:
  struct Slot;
  struct GroupState;
  struct Call;

  absl::Status Run(const Call& call, absl::FunctionRef<void(const Round&)> compute);
  absl::Status RunEager(const Call& call, GroupState& group, Slot& me,
                        absl::FunctionRef<void(const Round&)> compute);
  absl::Status RunInPlace(const Call& call, GroupState& group, Slot& me,
                          absl::FunctionRef<void(const Round&)> compute);
  // Waits for `ready` (every peer has arrived) with the collective's
  // timeout, diagnosing divergent and finished peers while it blocks.
  absl::Status AwaitPeers(const Call& call, Slot& me, absl::FunctionRef<bool()> ready);
  absl::Status Mismatch(const Call& call, int64_t peer) const;
  absl::StatusOr<GroupState*> FindGroup(int64_t device, absl::Span<const int64_t> group);
  // Waits until `ready()`; spins first, then blocks. Fails on the deadline,
  // on poison (if `honor_poison`) or when `diagnose()` finds a divergence.
  absl::Status Wait(Slot& me, absl::FunctionRef<bool()> ready, bool honor_poison,
                    absl::FunctionRef<absl::Status()> diagnose,
                    absl::FunctionRef<absl::Status()> on_timeout);
  void Notify();
  void Poison(const absl::Status& status);
  absl::Status LocalError(int64_t device, absl::Status status);
  std::string DescribePublished(int64_t device) const;

  const int64_t num_devices_;
  const InProcessOptions options_;
  absl::Duration spin_;
  std::unique_ptr<Slot[]> slots_;

  std::mutex groups_mu_;
  std::map<std::vector<int64_t>, std::unique_ptr<GroupState>> groups_;

  // Blocking: waiters sleep on cv_; a state change wakes them only if
  // someone sleeps.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int64_t> sleepers_{0};
  std::atomic<bool> poisoned_{false};
  absl::Status failure_;  // guarded by mu_
};

}  // namespace sharc::runtime
