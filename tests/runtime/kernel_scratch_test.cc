#include "runtime/kernel_scratch.h"

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

namespace sharc::runtime {
namespace {

TEST(KernelScratchTest, LargeBlocksAreReusedAndAligned) {
  const KernelScratchStats before = GetKernelScratchStats();
  void* a = KernelScratchAllocate(nullptr, 1 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 1, 1 << 20);
  KernelScratchFree(nullptr, a);
  void* b = KernelScratchAllocate(nullptr, 1 << 20);
  EXPECT_EQ(b, a);  // the same block, its pages already touched
  const KernelScratchStats after = GetKernelScratchStats();
  EXPECT_EQ(after.misses - before.misses, 1);
  EXPECT_EQ(after.hits - before.hits, 1);
  KernelScratchFree(nullptr, b);
}

TEST(KernelScratchTest, SmallBlocksGoStraightToMalloc) {
  const KernelScratchStats before = GetKernelScratchStats();
  void* a = KernelScratchAllocate(nullptr, 100);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  std::memset(a, 2, 100);
  KernelScratchFree(nullptr, a);
  KernelScratchFree(nullptr, nullptr);
  const KernelScratchStats after = GetKernelScratchStats();
  EXPECT_EQ(after.misses, before.misses);
  EXPECT_EQ(after.hits, before.hits);
}

TEST(KernelScratchTest, HoldsNoMoreThanTwiceItsPeakInUse) {
  // Growing sizes, one at a time: the scratch must not keep one of each.
  for (size_t kib = 16; kib <= 4096; kib += 64) {
    void* p = KernelScratchAllocate(nullptr, kib << 10);
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[0] = 1;
    KernelScratchFree(nullptr, p);
  }
  EXPECT_LE(GetKernelScratchStats().held_bytes, 2 * (int64_t{4096} << 10) + 8192);
}

}  // namespace
}  // namespace sharc::runtime
