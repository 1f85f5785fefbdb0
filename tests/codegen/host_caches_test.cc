// The cache sizes the kernel schedules read (codegen/host_caches.h).
#include "codegen/host_caches.h"

#include "gtest/gtest.h"

namespace sharc::codegen {
namespace {

TEST(HostCachesTest, ParsesSizesAsLinuxWritesThem) {
  EXPECT_EQ(ParseCacheSize("48K"), 48 << 10);
  EXPECT_EQ(ParseCacheSize("2048K"), 2 << 20);
  EXPECT_EQ(ParseCacheSize("1M"), 1 << 20);
  EXPECT_EQ(ParseCacheSize("512"), 512);
  EXPECT_EQ(ParseCacheSize(""), -1);
  EXPECT_EQ(ParseCacheSize("K"), -1);
  EXPECT_EQ(ParseCacheSize("12Q"), -1);
  EXPECT_EQ(ParseCacheSize("0K"), -1);
}

// Whatever the host, the sizes are plausible: an L1 of 16 KiB to 1 MiB and
// an L2 above it.
TEST(HostCachesTest, HostSizesArePlausible) {
  const HostCaches& caches = HostCacheSizes();
  EXPECT_GE(caches.l1d_bytes, 16 << 10);
  EXPECT_LE(caches.l1d_bytes, 1 << 20);
  EXPECT_GT(caches.l2_bytes, caches.l1d_bytes);
}

}  // namespace
}  // namespace sharc::codegen
