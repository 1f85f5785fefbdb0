#include "runtime/in_process_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/communicator_checks.h"
#include "runtime/reduction.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sharc::runtime {
namespace {

using Clock = std::chrono::steady_clock;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Round counters pack (sequence + 1) above a 16-bit arrival count.
constexpr int kCountBits = 16;
constexpr uint64_t kCountMask = (uint64_t{1} << kCountBits) - 1;
constexpr int64_t kMaxGroupSize = static_cast<int64_t>(kCountMask);
inline uint64_t Pack(int64_t sequence, uint64_t count) {
  return (static_cast<uint64_t>(sequence + 1) << kCountBits) | count;
}
inline uint64_t TagOf(uint64_t v) { return v >> kCountBits; }

inline uint64_t Mix(uint64_t h, uint64_t v) {
  v *= 0x9e3779b97f4a7c15ull;
  v ^= v >> 29;
  return (h ^ v) * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
}

constexpr int kNameWords = 8;  // the first 64 characters of a name, for messages

// Element loops larger than this may use the device's OpenMP threads.
constexpr int64_t kParallelBytes = int64_t{1} << 20;
// Work unit of the all-reduce: reduce a block into our output, then copy it
// to the other members while it is still in cache.
constexpr int64_t kAllReduceBlockBytes = 16384;
// Long rows are split into pieces of this size when copies run in parallel.
constexpr int64_t kCopyPieceBytes = 256 * 1024;

// Copies `rows` rows of `row_bytes` from src (stride src_stride) to dst
// (stride dst_stride), using up to `threads` OpenMP threads when large.
void StridedCopy(uint8_t* dst, int64_t dst_stride, const uint8_t* src, int64_t src_stride,
                 int64_t rows, int64_t row_bytes, int threads) {
  if (rows <= 0 || row_bytes <= 0) return;
  const int64_t total = rows * row_bytes;
  if (threads > 1 && total >= kParallelBytes) {
    const int64_t pieces = std::max<int64_t>(1, (row_bytes + kCopyPieceBytes - 1) / kCopyPieceBytes);
    const int64_t piece = (row_bytes + pieces - 1) / pieces;
    const int64_t tasks = rows * pieces;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t r = t / pieces, k = t % pieces;
      const int64_t begin = k * piece, end = std::min(row_bytes, begin + piece);
      if (begin < end) {
        std::memcpy(dst + r * dst_stride + begin, src + r * src_stride + begin,
                    static_cast<size_t>(end - begin));
      }
    }
    return;
  }
  if (dst_stride == row_bytes && src_stride == row_bytes) {
    std::memcpy(dst, src, static_cast<size_t>(total));
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<size_t>(row_bytes));
  }
}

uint64_t HashShape(uint64_t h, const hlo::Shape& shape) {
  h = Mix(h, static_cast<uint64_t>(shape.type()));
  h = Mix(h, static_cast<uint64_t>(shape.rank()));
  for (int64_t d : shape.dims()) h = Mix(h, static_cast<uint64_t>(d));
  return h;
}

uint64_t HashCall(const CollectiveFingerprint& fp, absl::Span<const int64_t> group,
                  const Buffer& input, const Buffer& output, uint64_t extra) {
  uint64_t h = Mix(0x5348415243ull, static_cast<uint64_t>(fp.opcode));
  h = Mix(h, std::hash<std::string_view>()(fp.name));
  h = Mix(h, static_cast<uint64_t>(fp.channel_id));
  h = Mix(h, static_cast<uint64_t>(fp.sequence));
  h = Mix(h, group.size());
  for (int64_t m : group) h = Mix(h, static_cast<uint64_t>(m));
  h = HashShape(h, input.shape());
  h = HashShape(h, output.shape());
  return Mix(h, extra);
}

}  // namespace

// Per device, on its own cache lines. `round` is written by the owner
// before it arrives and read by the members of the same round once they see
// it arrived (an eager round: `progress`; a round in place: the group's
// arrival counter). The atomics of the diagnosis line describe the device's
// latest call and may be read by anyone at any time.
struct alignas(128) InProcessCommunicator::Slot {
  // What the device published for its rounds, by sequence parity. The owner
  // rewrites round[p] two rounds later, once every reader of the last eager
  // round of that parity is done with it (readers of a round in place are
  // done when its departures are).
  struct Published {
    const void* input = nullptr;
    void* output = nullptr;
    uint64_t hash = 0;
  };
  Published round[2];
  // Eager rounds only, on the same cache line as `round`, so a peer gets
  // both with one transfer: 2s+1 once the device has published round s, 2s+2
  // once it has finished reading its peers' round s. It only grows, because
  // a device's sequence numbers do; so "done with s" also reads as "done with
  // every eager round before s", and a device never needs a shared counter
  // or an acknowledgement sent to each peer.
  std::atomic<int64_t> progress{-1};

  // Owner-only, off the shared line: the eager staging buffers (allocated on
  // first use), and for each parity the last eager round that used it, whose
  // other members must be done with it before it is rewritten.
  alignas(64) std::unique_ptr<uint8_t, void (*)(void*)> staging[2] = {{nullptr, std::free},
                                                                      {nullptr, std::free}};
  int64_t staged_sequence[2] = {-1, -1};
  GroupState* staged_group[2] = {nullptr, nullptr};
  // The latest eager round whose members we saw all arrive: they were done
  // with every earlier round then, which usually settles the check above
  // without reading the peers' lines again.
  GroupState* seen_group = nullptr;
  int64_t seen_sequence = -1;
  // The adaptive spin budget (see InProcessOptions::spin).
  int64_t spin_ns = -1;
  // The last group used, so repeated collectives skip the map.
  std::vector<int64_t> cached_members;
  GroupState* cached_group = nullptr;
  // The last name published to `name`, so repeated calls skip rewriting it.
  std::string_view published_name;

  // Diagnosis: the device's latest call.
  alignas(64) std::atomic<int64_t> sequence{-1};
  std::atomic<uint64_t> hash{0};
  std::atomic<int32_t> opcode{0};
  std::atomic<int64_t> channel_id{0};
  std::atomic<int64_t> bytes{0};
  std::atomic<uint64_t> name[kNameWords] = {};
  std::atomic<bool> finished{false};
};

struct InProcessCommunicator::GroupState {
  std::vector<int64_t> members;
  alignas(64) std::atomic<uint64_t> arrivals{0};
  alignas(64) std::atomic<uint64_t> departures{0};
};

struct InProcessCommunicator::Call {
  int64_t device = 0;
  const CollectiveFingerprint* fingerprint = nullptr;
  absl::Span<const int64_t> group;
  int64_t position = 0;
  uint64_t hash = 0;
  int64_t bytes = 0;
  const void* input = nullptr;
  void* output = nullptr;
  // Inputs up to this many bytes take the eager path.
  int64_t eager_limit = InProcessCommunicator::kEagerBytes;

  // What every collective fills in the same way; `tag` separates kinds
  // (and their parameters) in the mismatch hash.
  static Call For(int64_t device, const CollectiveFingerprint& fingerprint,
                  absl::Span<const int64_t> group, int64_t position, const Buffer& input,
                  Buffer& output, uint64_t tag) {
    Call call;
    call.device = device;
    call.fingerprint = &fingerprint;
    call.group = group;
    call.position = position;
    call.hash = HashCall(fingerprint, group, input, output, tag);
    call.bytes = input.size_bytes();
    call.input = input.data();
    call.output = output.data();
    return call;
  }
};

InProcessCommunicator::InProcessCommunicator(int64_t num_devices, InProcessOptions options)
    : num_devices_(std::max<int64_t>(num_devices, 1)),
      options_(options),
      slots_(new Slot[static_cast<size_t>(std::max<int64_t>(num_devices, 1))]) {
  spin_ = options_.spin;
  if (spin_ < absl::ZeroDuration()) {
    const int64_t cores = std::max<unsigned>(1, std::thread::hardware_concurrency());
    spin_ = num_devices_ <= cores ? absl::Microseconds(50) : absl::Microseconds(2);
  }
  if (num_devices < 1) {
    failure_ = absl::InvalidArgumentError(
        absl::StrCat("a communicator needs at least one device, got ", num_devices));
    poisoned_.store(true);
  }
}

InProcessCommunicator::~InProcessCommunicator() = default;

// Every state change a waiter waits for is a seq_cst read-modify-write (or
// store) made just before Notify; with the waiter's seq_cst increment of
// sleepers_ and fence before it re-checks, either the waiter sees the change
// or Notify sees the sleeper (no lost wake-up, no fence needed here).
void InProcessCommunicator::Notify() {
  if (sleepers_.load(std::memory_order_seq_cst) > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
  }
}

void InProcessCommunicator::Poison(const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failure_.ok()) failure_ = status;
    poisoned_.store(true, std::memory_order_seq_cst);
  }
  cv_.notify_all();
}

absl::Status InProcessCommunicator::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

void InProcessCommunicator::Abort(int64_t device, const absl::Status& reason) {
  absl::Status status = reason.ok() ? absl::AbortedError("aborted") : reason;
  Poison(absl::Status(status.code(),
                      absl::StrCat("device ", device, " failed: ", status.message())));
}

void InProcessCommunicator::MarkFinished(int64_t device) {
  if (device < 0 || device >= num_devices_) return;
  slots_[static_cast<size_t>(device)].finished.store(true, std::memory_order_seq_cst);
  Notify();
}

absl::Status InProcessCommunicator::LocalError(int64_t device, absl::Status status) {
  Poison(absl::Status(status.code(),
                      absl::StrCat("device ", device, " failed: ", status.message())));
  return status;
}

std::string InProcessCommunicator::DescribePublished(int64_t device) const {
  const Slot& s = slots_[static_cast<size_t>(device)];
  char name[kNameWords * 8 + 1] = {};
  for (int i = 0; i < kNameWords; ++i) {
    uint64_t w = s.name[i].load(std::memory_order_relaxed);
    std::memcpy(name + 8 * i, &w, 8);
  }
  int32_t op = s.opcode.load(std::memory_order_relaxed);
  std::string text = absl::StrCat(
      op >= 0 && op < hlo::kNumOpcodes ? hlo::OpcodeName(static_cast<hlo::Opcode>(op)) : "?",
      " %", name, " (");
  if (int64_t ch = s.channel_id.load(std::memory_order_relaxed); ch != 0) {
    absl::StrAppend(&text, "channel_id=", ch, ", ");
  }
  absl::StrAppend(&text, "sequence ", s.sequence.load(std::memory_order_relaxed), ", ",
                  s.bytes.load(std::memory_order_relaxed), " bytes)");
  return text;
}

absl::StatusOr<InProcessCommunicator::GroupState*> InProcessCommunicator::FindGroup(
    int64_t device, absl::Span<const int64_t> group) {
  Slot& me = slots_[static_cast<size_t>(device)];
  if (me.cached_group != nullptr && absl::MakeConstSpan(me.cached_members) == group) {
    return me.cached_group;
  }
  if (static_cast<int64_t>(group.size()) > kMaxGroupSize) {
    return absl::InvalidArgumentError(absl::StrCat("a group of ", group.size(),
                                                   " devices is larger than the supported ",
                                                   kMaxGroupSize));
  }
  std::vector<int64_t> key(group.begin(), group.end());
  std::vector<int64_t> sorted = key;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= num_devices_) {
      return absl::InvalidArgumentError(absl::StrCat("group ", GroupString(group), " names device ",
                                                     sorted[i], ", outside [0, ", num_devices_,
                                                     ")"));
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", GroupString(group), " names device ", sorted[i], " twice"));
    }
  }
  GroupState* state;
  {
    std::lock_guard<std::mutex> lock(groups_mu_);
    std::unique_ptr<GroupState>& slot = groups_[key];
    if (slot == nullptr) {
      slot = std::make_unique<GroupState>();
      slot->members = key;
    }
    state = slot.get();
  }
  me.cached_members = std::move(key);
  me.cached_group = state;
  return state;
}

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

// ---------------------------------------------------------------- the ops --

#define SHARC_LOCAL_CHECK(expr)                                                       \
  do {                                                                                \
    absl::Status sharc_local_status_ = (expr);                                        \
    if (!sharc_local_status_.ok()) {                                                  \
      return LocalError(device, absl::Status(sharc_local_status_.code(),              \
                                             absl::StrCat(fingerprint.ToString(), ": ", \
                                                          sharc_local_status_.message()))); \
    }                                                                                 \
  } while (false)

absl::Status InProcessCommunicator::AllReduce(int64_t device,
                                              const CollectiveFingerprint& fingerprint,
                                              absl::Span<const int64_t> group, ReductionKind kind,
                                              const Buffer& input, Buffer& output) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  SHARC_LOCAL_CHECK(ValidateAllReduce(kind, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());

  const hlo::PrimitiveType type = input.type();
  const int64_t n = input.num_elements();
  const int64_t w = hlo::ByteWidth(type);
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        100 + static_cast<uint64_t>(kind));
  // Eagerly every member reduces all g inputs itself, so stay eager only
  // while that is cheaper than the second rendezvous of the split path.
  call.eager_limit = 2 * kEagerBytes / static_cast<int64_t>(group.size());
  return Run(call, [&](const Round& r) {
    if (r.eager) {
      // Small: every member reduces everything into its own output.
      ReduceElements(type, kind, r.inputs, r.size, 0, n, r.outputs[r.position]);
      return;
    }
    // Member p reduces slice p (whole cache lines) and writes it to everyone.
    const int64_t unit = std::max<int64_t>(1, 64 / w);
    const int64_t units = (n + unit - 1) / unit;
    const int64_t per = ((units + r.size - 1) / r.size) * unit;
    const int64_t lo = std::min(n, r.position * per);
    const int64_t hi = std::min(n, lo + per);
    const int64_t block = std::max<int64_t>(unit, kAllReduceBlockBytes / w);
    const int64_t blocks = (hi - lo + block - 1) / block;
    auto do_block = [&](int64_t i) {
      const int64_t b = lo + i * block;
      const int64_t e = std::min(hi, b + block);
      uint8_t* own = static_cast<uint8_t*>(r.outputs[r.position]) + b * w;
      ReduceElements(type, kind, r.inputs, r.size, b, e - b, own);
      for (int64_t j = 0; j < r.size; ++j) {
        if (j == r.position) continue;
        std::memcpy(static_cast<uint8_t*>(r.outputs[j]) + b * w, own,
                    static_cast<size_t>((e - b) * w));
      }
    };
    if (threads > 1 && (hi - lo) * w >= kParallelBytes) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t i = 0; i < blocks; ++i) do_block(i);
    } else {
      for (int64_t i = 0; i < blocks; ++i) do_block(i);
    }
  });
}

absl::Status InProcessCommunicator::AllGather(int64_t device,
                                              const CollectiveFingerprint& fingerprint,
                                              absl::Span<const int64_t> group, int64_t dim,
                                              const Buffer& input, Buffer& output) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  SHARC_LOCAL_CHECK(ValidateAllGather(static_cast<int64_t>(group.size()), dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t piece = DimProduct(dims, static_cast<size_t>(dim), dims.size()) *
                        hlo::ByteWidth(input.type());
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        200 + static_cast<uint64_t>(dim));
  return Run(call, [&](const Round& r) {
    // Pull every member's piece of each row into our own output.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    for (int64_t j = 0; j < r.size; ++j) {
      StridedCopy(out + j * piece, r.size * piece, static_cast<const uint8_t*>(r.inputs[j]), piece,
                  outer, piece, threads);
    }
  });
}

absl::Status InProcessCommunicator::ReduceScatter(int64_t device,
                                                  const CollectiveFingerprint& fingerprint,
                                                  absl::Span<const int64_t> group,
                                                  ReductionKind kind, int64_t dim,
                                                  const Buffer& input, Buffer& output) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  SHARC_LOCAL_CHECK(
      ValidateReduceScatter(static_cast<int64_t>(group.size()), kind, dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const hlo::Shape& expected = output.shape();
  const hlo::PrimitiveType type = input.type();
  const int64_t w = hlo::ByteWidth(type);
  const std::vector<int64_t>& dims = expected.dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk = DimProduct(dims, static_cast<size_t>(dim), dims.size());  // elements
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        300 + static_cast<uint64_t>(dim) * 8 + static_cast<uint64_t>(kind));
  return Run(call, [&](const Round& r) {
    // Each member reduces its own chunk of every row, into its own output.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    const int64_t row = r.size * chunk;
    const int64_t total = outer * chunk;
    if (threads > 1 && total * w >= kParallelBytes) {
      // Split rows into pieces so that a single long row also spreads out.
      const int64_t piece_elems = std::max<int64_t>(1, kCopyPieceBytes / w);
      const int64_t pieces = (chunk + piece_elems - 1) / piece_elems;
      const int64_t tasks = outer * pieces;
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int64_t t = 0; t < tasks; ++t) {
        const int64_t o = t / pieces, k = t % pieces;
        const int64_t b = k * piece_elems, e = std::min(chunk, b + piece_elems);
        ReduceElements(type, kind, r.inputs, r.size, o * row + r.position * chunk + b, e - b,
                       out + (o * chunk + b) * w);
      }
      return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      ReduceElements(type, kind, r.inputs, r.size, o * row + r.position * chunk, chunk,
                     out + o * chunk * w);
    }
  });
}

absl::Status InProcessCommunicator::AllToAll(int64_t device,
                                             const CollectiveFingerprint& fingerprint,
                                             absl::Span<const int64_t> group, int64_t dim,
                                             const Buffer& input, Buffer& output) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  SHARC_LOCAL_CHECK(ValidateAllToAll(static_cast<int64_t>(group.size()), dim, input, output));
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  const int64_t g = static_cast<int64_t>(group.size());
  const std::vector<int64_t>& dims = input.shape().dims();
  const int64_t outer = DimProduct(dims, 0, static_cast<size_t>(dim));
  const int64_t chunk_bytes = (dims[static_cast<size_t>(dim)] / g) *
                              DimProduct(dims, static_cast<size_t>(dim) + 1, dims.size()) *
                              hlo::ByteWidth(input.type());
  const int threads = options_.threads_per_device;
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        400 + static_cast<uint64_t>(dim));
  return Run(call, [&](const Round& r) {
    // Our output chunk j is member j's input chunk p, in every row.
    uint8_t* out = static_cast<uint8_t*>(r.outputs[r.position]);
    const int64_t row = r.size * chunk_bytes;
    for (int64_t j = 0; j < r.size; ++j) {
      StridedCopy(out + j * chunk_bytes, row,
                  static_cast<const uint8_t*>(r.inputs[j]) + r.position * chunk_bytes, row, outer,
                  chunk_bytes, threads);
    }
  });
}

absl::Status InProcessCommunicator::CollectivePermute(
    int64_t device, const CollectiveFingerprint& fingerprint,
    absl::Span<const std::pair<int64_t, int64_t>> pairs, const Buffer& input, Buffer& output) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  SHARC_LOCAL_CHECK(ValidateCollectivePermute(input, output));
  if (poisoned_.load(std::memory_order_acquire)) return failure();
  // Everyone named in a pair takes part, in id order.
  absl::InlinedVector<int64_t, 8> participants;
  int64_t source = -1;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= num_devices_ || t < 0 || t >= num_devices_) {
      SHARC_LOCAL_CHECK(absl::InvalidArgumentError(absl::StrCat(
          "pair {", s, ",", t, "} names a device outside [0, ", num_devices_, ")")));
    }
    if (t == device) {
      if (source >= 0) {
        SHARC_LOCAL_CHECK(absl::InvalidArgumentError(
            absl::StrCat("device ", device, " is the target of more than one pair")));
      }
      source = s;
    }
    participants.push_back(s);
    participants.push_back(t);
  }
  std::sort(participants.begin(), participants.end());
  participants.erase(std::unique(participants.begin(), participants.end()), participants.end());
  if (std::find(participants.begin(), participants.end(), device) == participants.end()) {
    if (output.size_bytes() > 0) std::memset(output.data(), 0, static_cast<size_t>(output.size_bytes()));
    return absl::OkStatus();
  }
  absl::Span<const int64_t> group(participants.data(), participants.size());
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  int64_t source_position = -1;
  if (source >= 0) source_position = *PositionInGroup(source, group);
  uint64_t pair_hash = 500;
  for (const auto& [s, t] : pairs) pair_hash = Mix(Mix(pair_hash, static_cast<uint64_t>(s)), static_cast<uint64_t>(t));
  const int64_t bytes = output.size_bytes();
  Call call = Call::For(device, fingerprint, group, *position, input, output,
                        pair_hash);
  return Run(call, [&](const Round& r) {
    void* out = r.outputs[r.position];
    if (bytes == 0) return;
    if (source_position < 0) {
      std::memset(out, 0, static_cast<size_t>(bytes));
    } else {
      std::memcpy(out, r.inputs[source_position], static_cast<size_t>(bytes));
    }
  });
}

absl::Status InProcessCommunicator::RunLed(int64_t device,
                                           const CollectiveFingerprint& fingerprint,
                                           absl::Span<const int64_t> group, uint64_t tag,
                                           const Buffer& input, Buffer& output,
                                           absl::FunctionRef<absl::Status(const Round&)> lead) {
  if (device < 0 || device >= num_devices_) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " is outside [0, ",
                                                   num_devices_, ")"));
  }
  absl::StatusOr<int64_t> position = PositionInGroup(device, group);
  SHARC_LOCAL_CHECK(position.status());
  Call call = Call::For(device, fingerprint, group, *position, input, output, tag);
  // Never eager: the leader writes every member's output in place, so all
  // of them must stay until it is done (the departure rendezvous).
  call.eager_limit = -1;
  absl::Status led;
  absl::Status st = Run(call, [&](const Round& r) {
    if (r.position != 0) return;
    led = lead(r);
    if (!led.ok()) Poison(led);
  });
  if (!st.ok()) return st;
  if (!led.ok()) return led;
  // The leader poisons before it departs, so a failed lead is visible here.
  if (poisoned_.load(std::memory_order_acquire)) return failure();
  return absl::OkStatus();
}

#undef SHARC_LOCAL_CHECK

}  // namespace sharc::runtime
