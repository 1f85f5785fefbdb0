// The data cache sizes of this process's CPU, as the kernel schedules need
// them (the GEMM's row-tile order keeps the whole packed rhs in L2). Read
// once from Linux's /sys/devices/system/cpu/cpu0/cache (the sizes CPUID
// reports, per core), else from sysconf; a size neither gives is taken as
// Ice Lake's, the core the defaults were first measured on. The kernel
// cache key includes them (kernel_compiler.cc): the sessions' machines
// changed from a 512 KiB L2 (Zen 3) to 2 MiB (Emerald Rapids).
#pragma once

#include <cstdint>
#include <string>

namespace sharc::codegen {

struct HostCaches {
  int64_t l1d_bytes = int64_t{48} << 10;
  int64_t l2_bytes = int64_t{1} << 20;
};

// A size as /sys writes it ("48K", "2048K", "1M", "512"), or -1.
int64_t ParseCacheSize(const std::string& text);

// This CPU's caches, read once per process.
const HostCaches& HostCacheSizes();

}  // namespace sharc::codegen
