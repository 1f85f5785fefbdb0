#include "runtime/kernel_scratch.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace sharc::runtime {
namespace {

constexpr size_t kAlignment = 64;
// The block's size sits in this header before the pointer handed out; the
// header also keeps reads just before the start inside the block.
constexpr size_t kHeader = kAlignment;
constexpr size_t kTailPadding = kAlignment;
// Below this, malloc's heap reuses freed memory without faults. A GEMM's
// per-task packed tiles (48 KiB for a 512-long contraction, more for longer
// ones) are pooled: from 128 KiB glibc maps each afresh, and below that its
// heap trims what a call frees.
constexpr size_t kMinPooledBytes = size_t{16} << 10;

struct Scratch {
  std::mutex mu;
  absl::flat_hash_map<size_t, std::vector<void*>> free;  // by block size
  int64_t free_bytes = 0;
  int64_t in_use_bytes = 0;
  int64_t peak_in_use_bytes = 0;
  KernelScratchStats stats;
};

Scratch& TheScratch() {
  static Scratch* scratch = new Scratch();  // never destroyed: kernels may run at exit
  return *scratch;
}

size_t BlockBytes(size_t bytes) {
  const size_t total = kHeader + bytes + kTailPadding;
  if (total < kMinPooledBytes) return (total + kAlignment - 1) / kAlignment * kAlignment;
  return (total + 4095) / 4096 * 4096;
}

}  // namespace

void* KernelScratchAllocate(void* /*user_context*/, size_t bytes) {
  const size_t block = BlockBytes(bytes);
  void* base = nullptr;
  if (block >= kMinPooledBytes) {
    Scratch& s = TheScratch();
    std::lock_guard<std::mutex> lock(s.mu);
    auto it = s.free.find(block);
    if (it != s.free.end() && !it->second.empty()) {
      base = it->second.back();
      it->second.pop_back();
      s.free_bytes -= static_cast<int64_t>(block);
      ++s.stats.hits;
    } else {
      ++s.stats.misses;
    }
    s.in_use_bytes += static_cast<int64_t>(block);
    s.peak_in_use_bytes = std::max(s.peak_in_use_bytes, s.in_use_bytes);
  }
  if (base == nullptr) base = std::aligned_alloc(kAlignment, block);
  if (base == nullptr) {
    if (block >= kMinPooledBytes) {
      Scratch& s = TheScratch();
      std::lock_guard<std::mutex> lock(s.mu);
      s.in_use_bytes -= static_cast<int64_t>(block);
    }
    return nullptr;
  }
  *static_cast<size_t*>(base) = block;
  return static_cast<char*>(base) + kHeader;
}

void KernelScratchFree(void* /*user_context*/, void* ptr) {
  if (ptr == nullptr) return;
  void* base = static_cast<char*>(ptr) - kHeader;
  const size_t block = *static_cast<size_t*>(base);
  if (block < kMinPooledBytes) {
    std::free(base);
    return;
  }
  Scratch& s = TheScratch();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.in_use_bytes -= static_cast<int64_t>(block);
    if (s.free_bytes + s.in_use_bytes + static_cast<int64_t>(block) <= 2 * s.peak_in_use_bytes) {
      s.free[block].push_back(base);
      s.free_bytes += static_cast<int64_t>(block);
      return;
    }
  }
  std::free(base);
}

KernelScratchStats GetKernelScratchStats() {
  Scratch& s = TheScratch();
  std::lock_guard<std::mutex> lock(s.mu);
  KernelScratchStats stats = s.stats;
  stats.held_bytes = s.free_bytes;
  return stats;
}

}  // namespace sharc::runtime
