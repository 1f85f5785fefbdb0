// What a kernel's speed is measured against: the machine's FP32 FMA peak and
// its memory bandwidth for a number of threads, measured here (no table of
// CPU models to go stale) in about 0.2 s and cached on disk, keyed by the
// CPU's model name and the thread count. A profile (tools/profile.h)
// reports each kernel's FLOP rate and bytes moved as fractions of these.
#pragma once

#include <cstdint>
#include <string>

namespace sharc::runtime {

struct MachineLimits {
  int threads = 1;
  // Best FP32 FMA rate: independent vector FMAs on every thread.
  double fma_gflops = 0;
  // Best bytes read plus written per second: memcpy of 64 MiB per thread,
  // out of the caches.
  double memory_gbps = 0;
};

// The limits for `threads` threads: read from `cache_dir`/machine_limits
// when measured before on this CPU, else measured and written there (a
// cache that cannot be written is skipped). Empty `cache_dir`: measure.
MachineLimits MeasuredMachineLimits(int threads, const std::string& cache_dir);

// The widest FP32 FMA loop the CPU runs (AVX-512 or AVX2+FMA; 0 FLOPs
// without either): `iters` iterations of 12 independent vector FMAs.
// Returns the FLOPs done. Shared with the GEMM benchmark's BM_FmaPeak.
double FmaLoop(int64_t iters);
bool HasFma();

}  // namespace sharc::runtime
