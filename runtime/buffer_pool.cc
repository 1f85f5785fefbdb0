#include "runtime/buffer_pool.h"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/buffer.h"

namespace sharc::runtime {
namespace {

// Arrays this large are placed on 2 MiB boundaries and offered transparent
// huge pages: a kernel streaming them then misses the TLB 512x less often
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

void* SystemAllocate(int64_t block) {
  void* p = nullptr;
  if (block >= kHugePageMinBytes) {
    if (posix_memalign(&p, static_cast<size_t>(kHugePageBytes), static_cast<size_t>(block)) != 0) {
      return nullptr;
    }
#ifdef MADV_HUGEPAGE
    madvise(p, static_cast<size_t>(block), MADV_HUGEPAGE);  // advice only; failure is harmless
#endif
    return p;
  }
  return std::aligned_alloc(static_cast<size_t>(kBufferAlignment), static_cast<size_t>(block));
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
      std::free(p);
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
        std::free(list.back());
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
  void* p = SystemAllocate(BlockBytes(bytes));
  if (p == nullptr) return OutOfMemory(bytes, shape);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
}

}  // namespace sharc::runtime
