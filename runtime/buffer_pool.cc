#include "runtime/buffer_pool.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/buffer.h"

namespace sharc::runtime {
namespace {

// Arrays this large are allocated on 2 MiB boundaries (and start a few
// cache lines past one: kStaggerMinBytes) and offered transparent huge
// pages: a kernel streaming them then misses the TLB 512x less often
// and faults them in 512x fewer times (docs/performance_log.md). From one
// huge page up: the medium training step's [2048,256] activations (2 MiB)
// read by its GEMMs took the step from 597-609 ms to 581-590 (one thread,
// alternated); from 4 MiB they were ordinary pages.
constexpr int64_t kHugePageBytes = int64_t{2} << 20;
constexpr int64_t kHugePageMinBytes = kHugePageBytes;

// The pool holds at most this many times its peak bytes in use, free and in
// use together. Not 1: a run's blocks are not all alive at once (a step's
// distinct blocks add up to more than its peak), and a pool capped at the
// peak drops one at the end of every run and faults a fresh one in on the
// next.
constexpr int64_t kMaxHeldOverPeak = 2;

// The size a request of `bytes` is allocated and pooled as: whole 4 KiB
// pages for huge-page arrays (not whole huge pages: the tail of the last
// 2 MiB stays ordinary memory), whole cache lines otherwise, and never 0, so
// that every array (even an empty one) has a distinct, valid address.
int64_t BlockBytes(int64_t bytes) {
  if (bytes >= kHugePageMinBytes) return (bytes + 4095) / 4096 * 4096;
  const int64_t rounded = (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  return rounded == 0 ? kBufferAlignment : rounded;
}

// Blocks from this size start at different offsets within their first
// 4 KiB page (so the 4 KiB runs that page_walk.h walks side by side each
// span two pages; they are still sequential streams for the prefetcher), spread over it (Fibonacci hashing of a counter), rather than
// all on a page boundary (huge-page blocks on 2 MiB, large mallocs a fixed
// distance past one). With every array at the same offset, a kernel's
// loads of in[i] follow its stores to out[i - d] whose addresses match in
// their low 12 bits, and Intel cores hold such loads back until the store
// addresses resolve ("4K aliasing"). On the session 27 host (Emerald
// Rapids, one thread) the whole medium training step, alternated five
// times, took 445-464 ms with the offsets spread against 451-507: within
// that host's noise. (The kernel times first cited for this change came
// from profiles that still counted the program's first run, whose page
// faults dominated them; session 28 found that, see ProfileRuns.)
constexpr int64_t kStaggerMinBytes = int64_t{64} << 10;
constexpr int64_t kStaggerSpan = 4096;
std::atomic<uint32_t> stagger_count{0};

// The offset of the next staggered block from its allocation: a multiple
// of the 64-byte alignment in [64, 4096], with room below for the
// allocation's address.
int64_t NextStaggerOffset() {
  const uint32_t k = stagger_count.fetch_add(1, std::memory_order_relaxed);
  return kBufferAlignment * (1 + ((k * 2654435769u) >> 26));  // 64 * [1, 64]
}

void* SystemAllocate(int64_t block) {
  if (block < kStaggerMinBytes) {
    return std::aligned_alloc(static_cast<size_t>(kBufferAlignment), static_cast<size_t>(block));
  }
  const bool huge = block >= kHugePageMinBytes;
  const int64_t bytes = block + kStaggerSpan;
  void* base = nullptr;
  if (posix_memalign(&base, static_cast<size_t>(huge ? kHugePageBytes : 4096), static_cast<size_t>(bytes)) != 0) {
    return nullptr;
  }
#ifdef MADV_HUGEPAGE
  if (huge) madvise(base, static_cast<size_t>(bytes), MADV_HUGEPAGE);  // advice only; failure is harmless
#endif
  uint8_t* p = static_cast<uint8_t*>(base) + NextStaggerOffset();
  reinterpret_cast<void**>(p)[-1] = base;
  return p;
}

// Gives back a block of `block` bytes that SystemAllocate returned.
void SystemFree(void* p, int64_t block) {
  std::free(block < kStaggerMinBytes ? p : reinterpret_cast<void**>(p)[-1]);
}

absl::Status OutOfMemory(int64_t bytes, const hlo::Shape& shape) {
  return absl::ResourceExhaustedError(
      absl::StrCat("cannot allocate ", bytes, " bytes for a buffer of ", shape.ToString()));
}

}  // namespace

struct BufferPool::State {
  std::mutex mu;
  bool open = true;  // false once the pool is destroyed: blocks go to the system
  absl::flat_hash_map<int64_t, std::vector<void*>> free;  // by block size
  BufferPoolStats stats;

  // Takes back a block whose last user let it go.
  void Return(void* p, int64_t block) {
    std::lock_guard<std::mutex> lock(mu);
    stats.in_use_bytes -= block;
    if (!open ||
        stats.free_bytes + stats.in_use_bytes + block > kMaxHeldOverPeak * stats.peak_in_use_bytes) {
      SystemFree(p, block);
      return;
    }
    free[block].push_back(p);
    stats.free_bytes += block;
  }

  // Gives every free block back to the system (mu held).
  void Trim() { TrimTo(0); }

  // Gives free blocks back to the system until at most `keep` free bytes
  // remain (mu held).
  void TrimTo(int64_t keep) {
    for (auto it = free.begin(); it != free.end() && stats.free_bytes > keep;) {
      std::vector<void*>& list = it->second;
      while (!list.empty() && stats.free_bytes > keep) {
        SystemFree(list.back(), it->first);
        list.pop_back();
        stats.free_bytes -= it->first;
      }
      if (list.empty()) {
        free.erase(it++);
      } else {
        ++it;
      }
    }
  }
};

BufferPool::BufferPool() : state_(std::make_shared<State>()) {}

BufferPool::~BufferPool() {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->open = false;
  state_->Trim();
}

absl::StatusOr<std::shared_ptr<uint8_t>> BufferPool::Acquire(int64_t bytes,
                                                            const hlo::Shape& shape) {
  const int64_t block = BlockBytes(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    BufferPoolStats& s = state_->stats;
    auto it = state_->free.find(block);
    if (it != state_->free.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      s.free_bytes -= block;
      ++s.hits;
    } else {
      ++s.misses;
      // Sizes the pool holds but nobody asks for any more: give back as
      // many as the new block needs room for (not all: the others may be
      // this step's, asked for again later in it).
      const int64_t limit = kMaxHeldOverPeak * std::max(s.peak_in_use_bytes, block);
      state_->TrimTo(std::max<int64_t>(0, limit - s.in_use_bytes - block));
    }
    s.in_use_bytes += block;
    s.peak_in_use_bytes = std::max(s.peak_in_use_bytes, s.in_use_bytes);
  }
  if (p == nullptr) p = SystemAllocate(block);
  if (p == nullptr) {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stats.in_use_bytes -= block;
    return OutOfMemory(bytes, shape);
  }
  std::shared_ptr<State> state = state_;
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [state, block](uint8_t* q) {
    state->Return(q, block);
  });
}

BufferPoolStats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

absl::StatusOr<std::shared_ptr<uint8_t>> AllocateFromSystem(int64_t bytes, const hlo::Shape& shape) {
  const int64_t block = BlockBytes(bytes);
  void* p = SystemAllocate(block);
  if (p == nullptr) return OutOfMemory(bytes, shape);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [block](uint8_t* q) { SystemFree(q, block); });
}

}  // namespace sharc::runtime
