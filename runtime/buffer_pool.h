// A pool of array memory that a compiled program's runs reuse: a step of a
// training loop allocates the same few dozen sizes each time, and memory
// fresh from the system costs a page fault and a zeroed page on first
// touch: a ReLU over f32[16,128,1024] (`sharc run --iterations 50`, one
// thread, Zen 3) took 0.62 ms a run writing fresh memory and 0.32-0.36 ms
// writing a pooled block (docs/performance.md).
//
// Blocks are keyed by their size (rounded to the cache line, or to the
// 4 KiB page from 2 MiB up) and handed back when the last Buffer holding
// one is dropped, wherever that is (a result kept by the caller returns its
// block when the caller lets it go). The pool holds at most twice the most
// it ever had in use at once (free and in use together), so a program whose
// sizes change does not grow it without bound while a step whose blocks are
// not all alive at once keeps every one of them; beyond that, blocks go back
// to the system.
//
// One pool serves all devices of an in-process mesh (they are threads):
// a block freed by one device may be taken by another.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "hlo/ir/shape.h"

namespace sharc::runtime {

struct BufferPoolStats {
  int64_t hits = 0;          // blocks taken from the pool
  int64_t misses = 0;        // blocks allocated from the system
  int64_t free_bytes = 0;    // held by the pool, not in use
  int64_t in_use_bytes = 0;  // handed out and not yet back
  int64_t peak_in_use_bytes = 0;
};

class BufferPool {
 public:
  BufferPool();
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Memory for `bytes`, 64-byte aligned; from 64 KiB it starts at an
  // offset within its first 4 KiB page that differs from block to block
  // (buffer_pool.cc), and from 2 MiB it lies on huge pages where the
  // system gives them. Contents are whatever the last user left. The
  // returned pointer gives the block back when its last copy is dropped,
  // even after the pool itself is gone. `shape` names the value in errors.
  absl::StatusOr<std::shared_ptr<uint8_t>> Acquire(int64_t bytes, const hlo::Shape& shape);

  BufferPoolStats stats() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// Memory for `bytes` straight from the system (the pool's miss path, and
// buffers with no pool), freed when the last copy is dropped.
absl::StatusOr<std::shared_ptr<uint8_t>> AllocateFromSystem(int64_t bytes, const hlo::Shape& shape);

}  // namespace sharc::runtime
