#include "runtime/buffer_pool.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/buffer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::runtime {
namespace {

const hlo::Shape kF32x1000(hlo::PrimitiveType::kF32, {1000});

TEST(BufferPoolTest, ReusesABlockOnceItsLastHandleIsGone) {
  BufferPool pool;
  void* first = nullptr;
  {
    ASSERT_OK_AND_ASSIGN(Buffer a, Buffer::Allocate(kF32x1000, false, &pool));
    first = a.data();
    Buffer alias = a.Reshaped(hlo::Shape(hlo::PrimitiveType::kF32, {10, 100}));
    a = Buffer();
    // Still held by the alias: a second request must get other memory.
    ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::Allocate(kF32x1000, false, &pool));
    EXPECT_NE(b.data(), first);
  }
  ASSERT_OK_AND_ASSIGN(Buffer c, Buffer::Allocate(kF32x1000, false, &pool));
  EXPECT_EQ(c.data(), first);  // the last block given back is taken first
  EXPECT_EQ(pool.stats().hits, 1);
  EXPECT_EQ(pool.stats().misses, 2);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data()) % kBufferAlignment, 0u);
}

TEST(BufferPoolTest, ZeroedAllocationsAreZeroEvenOnReusedMemory) {
  BufferPool pool;
  {
    ASSERT_OK_AND_ASSIGN(Buffer a, Buffer::Allocate(kF32x1000, false, &pool));
    std::memset(a.data(), 0xff, static_cast<size_t>(a.size_bytes()));
  }
  ASSERT_OK_AND_ASSIGN(Buffer z, Buffer::Allocate(kF32x1000, /*zero=*/true, &pool));
  EXPECT_EQ(pool.stats().hits, 1);
  for (float v : z.typed<float>()) ASSERT_EQ(v, 0.0f);
}

TEST(BufferPoolTest, KeepsNoMoreThanTwiceItsPeakInUse) {
  BufferPool pool;
  // One block of each size in turn: each goes back after use, and the pool
  // must not hoard one of every size it has seen.
  for (int64_t n = 1000; n < 200000; n += 1000) {
    ASSERT_OK_AND_ASSIGN(Buffer b,
                         Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {n}), false, &pool));
    b.typed<float>()[0] = 1.0f;
  }
  const BufferPoolStats s = pool.stats();
  EXPECT_EQ(s.in_use_bytes, 0);
  EXPECT_LE(s.free_bytes, 2 * s.peak_in_use_bytes);
}

// Large blocks alive at once start at different offsets within their
// first page (so that a kernel's input and output do not 4K-alias), each
// 64-byte aligned and writable over its whole length, from the pool and
// straight from the system alike; a small one is 64-byte aligned.
TEST(BufferPoolTest, LargeBlocksStartAtDifferentOffsetsInTheirPage) {
  BufferPool pool;
  std::vector<Buffer> held;
  std::set<uintptr_t> offsets;
  for (int64_t n : {int64_t{16} << 10, int64_t{16} << 10, int64_t{1} << 20, int64_t{1} << 20}) {
    ASSERT_OK_AND_ASSIGN(Buffer b, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {n}), false, &pool));
    std::memset(b.data(), 0x5a, static_cast<size_t>(b.size_bytes()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % kBufferAlignment, 0u);
    offsets.insert(reinterpret_cast<uintptr_t>(b.data()) % 4096);
    held.push_back(std::move(b));
  }
  EXPECT_EQ(offsets.size(), 4u);
  ASSERT_OK_AND_ASSIGN(Buffer small, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {1000}), false, &pool));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % kBufferAlignment, 0u);
  ASSERT_OK_AND_ASSIGN(Buffer direct, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {1 << 20})));
  std::memset(direct.data(), 0x5a, static_cast<size_t>(direct.size_bytes()));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(direct.data()) % kBufferAlignment, 0u);
  // Given back and taken again: the same block, at its own offset.
  void* first = held[2].data();
  held[2] = Buffer();
  ASSERT_OK_AND_ASSIGN(Buffer again, Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {1 << 20}), false, &pool));
  EXPECT_EQ(again.data(), first);
}

TEST(BufferPoolTest, AHandleMayOutliveItsPool) {
  Buffer kept;
  {
    BufferPool pool;
    ASSERT_OK_AND_ASSIGN(kept, Buffer::Allocate(kF32x1000, false, &pool));
  }
  kept.typed<float>()[999] = 2.0f;  // still valid memory (ASan checks it)
  EXPECT_EQ(kept.typed<float>()[999], 2.0f);
}

}  // namespace
}  // namespace sharc::runtime
