// The in-process communicator's shared state (runtime/in_process_communicator.h),
// for its three files: in_process_communicator.cc (construction, failure,
// groups), in_process_rendezvous.cc (how members of a round meet and wait)
// and in_process_collectives.cc (the five collectives on top of a round).
// Internal to those files.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>
#include <vector>

#include "runtime/in_process_communicator.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace sharc::runtime {
namespace in_process {

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

// A hash of everything the members of one call must agree on (the
// fingerprint, the group, the shapes and the op's own `extra`).
uint64_t HashCall(const CollectiveFingerprint& fp, absl::Span<const int64_t> group,
                  const Buffer& input, const Buffer& output, uint64_t extra);

}  // namespace in_process

using in_process::kNameWords;

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
    call.hash = in_process::HashCall(fingerprint, group, input, output, tag);
    call.bytes = input.size_bytes();
    call.input = input.data();
    call.output = output.data();
    return call;
  }
};

}  // namespace sharc::runtime
