// How the members of one collective round meet (runtime/in_process_communicator.h):
// waiting with spin, yield and block; the eager one-rendezvous path for
// small inputs; the in-place path with arrival and departure counters.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/communicator_checks.h"
#include "runtime/in_process_internal.h"
#include "runtime/reduction.h"

namespace sharc::runtime {

using namespace in_process;  // NOLINT: the communicator's shared helpers

absl::Status InProcessCommunicator::Wait(Slot& me, absl::FunctionRef<bool()> ready,
                                         bool honor_poison,
                                         absl::FunctionRef<absl::Status()> diagnose,
                                         absl::FunctionRef<absl::Status()> on_timeout) {
  if (ready()) return absl::OkStatus();
  const Clock::time_point start = Clock::now();
  // Spin briefly: a peer that is running arrives within microseconds.
  const int64_t max_spin = absl::ToInt64Nanoseconds(spin_);
  const int64_t min_spin = std::min<int64_t>(max_spin, 500);
  if (me.spin_ns < 0) me.spin_ns = max_spin;
  const Clock::time_point spin_end = start + std::chrono::nanoseconds(me.spin_ns);
  for (;;) {
    for (int k = 0; k < 32; ++k) {
      if (ready()) {
        me.spin_ns = std::min(max_spin, me.spin_ns * 2 + 100);
        return absl::OkStatus();
      }
      CpuRelax();
    }
    if (honor_poison && poisoned_.load(std::memory_order_relaxed)) break;
    if (Clock::now() >= spin_end) break;
  }
  me.spin_ns = std::max(min_spin, me.spin_ns / 2);
  // Then hand the core to a runnable peer a few times (cheaper than sleeping
  // when devices outnumber cores).
  for (int k = 0; k < 4; ++k) {
    if (ready()) return absl::OkStatus();
    if (honor_poison && poisoned_.load(std::memory_order_relaxed)) break;
    std::this_thread::yield();
  }
  const bool bounded = honor_poison;
  const Clock::time_point deadline =
      bounded ? start + absl::ToChronoNanoseconds(options_.timeout) : Clock::time_point::max();
  // Then block, waking on every state change (and every 50 ms regardless,
  // to re-check the deadline and diagnose divergent peers).
  for (;;) {
    if (ready()) return absl::OkStatus();
    if (honor_poison && poisoned_.load(std::memory_order_acquire)) return failure();
    if (bounded) {
      if (absl::Status st = diagnose(); !st.ok()) return st;
      if (Clock::now() >= deadline) return on_timeout();
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (!ready() && !(honor_poison && poisoned_.load(std::memory_order_relaxed))) {
        Clock::time_point wake = Clock::now() + std::chrono::milliseconds(50);
        cv_.wait_until(lock, std::min(wake, deadline));
      }
    }
    sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

namespace {
inline int64_t Arrived(int64_t sequence) { return 2 * sequence + 1; }
inline int64_t Done(int64_t sequence) { return 2 * sequence + 2; }
}  // namespace

absl::Status InProcessCommunicator::Mismatch(const Call& call, int64_t peer) const {
  const CollectiveFingerprint& fp = *call.fingerprint;
  return absl::FailedPreconditionError(absl::StrCat(
      "collective mismatch at sequence ", fp.sequence, ": device ", call.device, " runs ",
      fp.ToString(), " on group ", GroupString(call.group), " with ", call.bytes,
      " bytes, but device ", peer, " runs ", DescribePublished(peer)));
}

absl::Status InProcessCommunicator::AwaitPeers(const Call& call, Slot& me,
                                               absl::FunctionRef<bool()> ready) {
  const CollectiveFingerprint& fp = *call.fingerprint;
  const int64_t seq = fp.sequence;
  auto diagnose = [&]() -> absl::Status {
    for (int64_t m : call.group) {
      if (m == call.device) continue;
      const Slot& s = slots_[static_cast<size_t>(m)];
      const int64_t ms = s.sequence.load(std::memory_order_acquire);
      const bool diverged = (ms == seq && s.hash.load(std::memory_order_relaxed) != call.hash) ||
                            ms > seq;
      // A peer past our round may just have finished it: `ready` says.
      if (diverged && !ready()) return Mismatch(call, m);
      if (ms < seq && s.finished.load(std::memory_order_acquire) && !ready()) {
        return absl::FailedPreconditionError(
            absl::StrCat("device ", m, " finished its program without reaching ", fp.ToString(),
                         " on group ", GroupString(call.group), " (device ", call.device,
                         " waited for it)"));
      }
    }
    return absl::OkStatus();
  };
  auto on_timeout = [&]() -> absl::Status {
    std::vector<int64_t> missing;
    for (int64_t m : call.group) {
      if (slots_[static_cast<size_t>(m)].sequence.load(std::memory_order_acquire) != seq) {
        missing.push_back(m);
      }
    }
    return absl::DeadlineExceededError(absl::StrCat(
        fp.ToString(), " on group ", GroupString(call.group), " timed out after ",
        absl::FormatDuration(options_.timeout), ": device", missing.size() == 1 ? " " : "s ",
        absl::StrJoin(missing, ","), " never arrived (device ", call.device, " waited)"));
  };
  return Wait(me, ready, /*honor_poison=*/true, diagnose, on_timeout);
}

absl::Status InProcessCommunicator::Run(const Call& call,
                                        absl::FunctionRef<void(const Round&)> compute) {
  if (poisoned_.load(std::memory_order_acquire)) return failure();
  const CollectiveFingerprint& fp = *call.fingerprint;
  const int64_t g = static_cast<int64_t>(call.group.size());
  if (g == 1) {
    const void* in = call.input;
    void* out = call.output;
    compute(Round{0, 1, &in, &out, false});
    return absl::OkStatus();
  }
  absl::StatusOr<GroupState*> found = FindGroup(call.device, call.group);
  if (!found.ok()) {
    return LocalError(call.device, absl::Status(found.status().code(),
                                                absl::StrCat(fp.ToString(), ": ",
                                                             found.status().message())));
  }
  GroupState& gs = **found;
  const int64_t seq = fp.sequence;
  const int parity = static_cast<int>(seq & 1);
  const bool eager = call.bytes <= call.eager_limit;
  Slot& me = slots_[static_cast<size_t>(call.device)];

  // The parity's published fields and staging buffer are ours to rewrite
  // once every other member of the last eager round that used them is done
  // with that round. Two rounds later that is almost always already so.
  GroupState* staged = me.staged_group[parity];
  if (staged != nullptr && staged == me.seen_group &&
      me.seen_sequence > me.staged_sequence[parity]) {
    staged = nullptr;
  }
  if (staged != nullptr) {
    const int64_t done = Done(me.staged_sequence[parity]);
    auto read = [&] {
      for (int64_t m : staged->members) {
        if (slots_[static_cast<size_t>(m)].progress.load(std::memory_order_acquire) < done) {
          return false;
        }
      }
      return true;
    };
    if (!read()) {
      auto none = []() { return absl::OkStatus(); };
      auto late = [&]() {
        return absl::DeadlineExceededError(absl::StrCat(
            fp.ToString(), ": device ", call.device, "'s previous contribution was not read by ",
            "its peers within ", absl::FormatDuration(options_.timeout)));
      };
      absl::Status st = Wait(me, read, /*honor_poison=*/true, none, late);
      if (!st.ok()) {
        Poison(st);
        return failure();
      }
    }
  }
  me.staged_group[parity] = nullptr;

  // Publish: first what diagnosis reads, then the round itself.
  me.hash.store(call.hash, std::memory_order_relaxed);
  me.opcode.store(static_cast<int32_t>(fp.opcode), std::memory_order_relaxed);
  me.channel_id.store(fp.channel_id, std::memory_order_relaxed);
  me.bytes.store(call.bytes, std::memory_order_relaxed);
  if (fp.name.data() != me.published_name.data() || fp.name.size() != me.published_name.size()) {
    char name[kNameWords * 8] = {};
    std::memcpy(name, fp.name.data(), std::min<size_t>(fp.name.size(), sizeof(name) - 1));
    for (int i = 0; i < kNameWords; ++i) {
      uint64_t w;
      std::memcpy(&w, name + 8 * i, 8);
      me.name[i].store(w, std::memory_order_relaxed);
    }
    me.published_name = fp.name;
  }
  me.sequence.store(seq, std::memory_order_release);
  if (eager) return RunEager(call, gs, me, compute);
  me.round[parity] = Slot::Published{call.input, call.output, call.hash};
  return RunInPlace(call, gs, me, compute);
}

// One rendezvous: copy our input to staging, announce it, wait until every
// peer has announced, reduce or gather from the peers' staging into our own
// output, and say that we are done reading. Nothing shared is written but
// our own slot's line, so the only cache-line transfers are the peers'
// announcements and staged data.
absl::Status InProcessCommunicator::RunEager(const Call& call, GroupState& gs, Slot& me,
                                             absl::FunctionRef<void(const Round&)> compute) {
  const int64_t seq = call.fingerprint->sequence;
  const int parity = static_cast<int>(seq & 1);
  const int64_t g = static_cast<int64_t>(call.group.size());
  const void* staged = call.input;
  if (call.bytes > 0) {
    if (me.staging[parity] == nullptr) {
      void* p = std::aligned_alloc(64, static_cast<size_t>(kEagerBytes));
      if (p == nullptr) {
        return LocalError(call.device, absl::ResourceExhaustedError(absl::StrCat(
                                           call.fingerprint->ToString(),
                                           ": cannot allocate a staging buffer")));
      }
      me.staging[parity].reset(static_cast<uint8_t*>(p));
    }
    std::memcpy(me.staging[parity].get(), call.input, static_cast<size_t>(call.bytes));
    staged = me.staging[parity].get();
  }
  me.round[parity] = Slot::Published{staged, call.output, call.hash};
  me.staged_sequence[parity] = seq;
  me.staged_group[parity] = &gs;
  me.progress.store(Arrived(seq), std::memory_order_seq_cst);
  Notify();

  // Peers that have arrived stay arrived (progress only grows), so scan
  // from the first one not yet seen.
  size_t next = 0;
  auto ready = [&] {
    for (; next < call.group.size(); ++next) {
      const int64_t m = call.group[next];
      if (slots_[static_cast<size_t>(m)].progress.load(std::memory_order_acquire) < Arrived(seq)) {
        return false;
      }
    }
    return true;
  };
  if (!ready()) {
    // A late peer may still read our staging buffer after we give up: it
    // belongs to the communicator, so that is safe, and the poison fails
    // the run anyway.
    if (absl::Status st = AwaitPeers(call, me, ready); !st.ok()) {
      Poison(st);
      return failure();
    }
  }
  me.seen_group = &gs;
  me.seen_sequence = seq;

  // Every member has published round `seq`. A peer cannot have rewritten
  // it since: it waits for our Done first. Check that all run the same
  // collective; every member compares the same published values, so either
  // all of them compute or none does.
  absl::InlinedVector<const void*, 8> inputs(static_cast<size_t>(g));
  absl::InlinedVector<void*, 8> outputs(static_cast<size_t>(g));
  for (int64_t j = 0; j < g; ++j) {
    const int64_t m = call.group[static_cast<size_t>(j)];
    if (m == call.device) {
      inputs[static_cast<size_t>(j)] = call.input;  // our own input is still ours
      outputs[static_cast<size_t>(j)] = call.output;
      continue;
    }
    const Slot::Published& pub = slots_[static_cast<size_t>(m)].round[parity];
    if (pub.hash != call.hash) {
      Poison(Mismatch(call, m));
      return failure();
    }
    inputs[static_cast<size_t>(j)] = pub.input;
    outputs[static_cast<size_t>(j)] = pub.output;
  }
  compute(Round{call.position, g, inputs.data(), outputs.data(), /*eager=*/true});
  // A peer about to rewrite its staging may be asleep waiting for this, and
  // this device may not reach another collective for a long time (kernels,
  // or the end of the program): wake it now rather than at its 50 ms
  // re-check, which under oversubscription (4 MPI processes on 2 cores)
  // stalled every round.
  me.progress.store(Done(seq), std::memory_order_seq_cst);
  Notify();
  return absl::OkStatus();
}

// Two rendezvous on the group's counters: arrive, let `compute` read and
// write the members' buffers in place, then depart and wait until every
// member has, so that no buffer is released while a peer still uses it.
absl::Status InProcessCommunicator::RunInPlace(const Call& call, GroupState& gs, Slot& me,
                                               absl::FunctionRef<void(const Round&)> compute) {
  const CollectiveFingerprint& fp = *call.fingerprint;
  const int64_t seq = fp.sequence;
  const int parity = static_cast<int>(seq & 1);
  const int64_t g = static_cast<int64_t>(call.group.size());

  // Arrive. A counter tagged with a later round means ours is complete:
  // fast members may move on to the group's next round before slow ones
  // have looked.
  const uint64_t want = static_cast<uint64_t>(seq + 1);
  const uint64_t target = Pack(seq, static_cast<uint64_t>(g));
  auto complete = [&](uint64_t v) { return v == target || TagOf(v) > want; };
  uint64_t v = gs.arrivals.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next;
    if (TagOf(v) == want) {
      next = v + 1;
    } else if (TagOf(v) < want) {
      next = Pack(seq, 1);
    } else {
      absl::Status st = absl::FailedPreconditionError(absl::StrCat(
          "collective mismatch: device ", call.device, " reaches ", fp.ToString(), " on group ",
          GroupString(call.group), " after the group has moved on to sequence ",
          static_cast<int64_t>(TagOf(v)) - 1));
      Poison(st);
      return failure();
    }
    if (gs.arrivals.compare_exchange_weak(v, next, std::memory_order_seq_cst,
                                          std::memory_order_relaxed)) {
      break;
    }
  }
  Notify();

  auto ready = [&] { return complete(gs.arrivals.load(std::memory_order_acquire)); };
  absl::Status waited = AwaitPeers(call, me, ready);
  if (!waited.ok()) {
    // Withdraw, unless the round completed meanwhile: then peers may already
    // be using our buffers and we must finish it with them.
    bool committed = false;
    v = gs.arrivals.load(std::memory_order_acquire);
    for (;;) {
      if (complete(v)) {
        committed = true;
        break;
      }
      if (TagOf(v) != want || (v & kCountMask) == 0) break;
      if (gs.arrivals.compare_exchange_weak(v, v - 1, std::memory_order_acq_rel,
                                            std::memory_order_acquire)) {
        break;
      }
    }
    if (!committed) {
      Poison(waited);
      return failure();
    }
  }

  // Every member is here. Check that all run the same collective; every
  // member compares the same published values, so either all of them
  // compute or none does.
  absl::InlinedVector<const void*, 8> inputs(static_cast<size_t>(g));
  absl::InlinedVector<void*, 8> outputs(static_cast<size_t>(g));
  for (int64_t j = 0; j < g; ++j) {
    const Slot& s = slots_[static_cast<size_t>(call.group[static_cast<size_t>(j)])];
    const Slot::Published& pub = s.round[parity];
    if (pub.hash != call.hash) {
      Poison(Mismatch(call, call.group[static_cast<size_t>(j)]));
      return failure();
    }
    inputs[static_cast<size_t>(j)] = pub.input;
    outputs[static_cast<size_t>(j)] = pub.output;
  }
  compute(Round{call.position, g, inputs.data(), outputs.data(), /*eager=*/false});

  // Depart, and wait until no member touches our buffers any more. This wait
  // cannot hang: every member has committed and computing never blocks.
  v = gs.departures.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t next = TagOf(v) == want ? v + 1 : Pack(seq, 1);
    if (gs.departures.compare_exchange_weak(v, next, std::memory_order_seq_cst,
                                            std::memory_order_relaxed)) {
      break;
    }
  }
  Notify();
  auto ok = []() { return absl::OkStatus(); };
  return Wait(me, [&] { return gs.departures.load(std::memory_order_acquire) == target; },
              /*honor_poison=*/false, ok, ok);
}

}  // namespace sharc::runtime
