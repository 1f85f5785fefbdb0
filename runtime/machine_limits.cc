#include "runtime/machine_limits.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"

namespace sharc::runtime {
namespace {

// 12 independent vector accumulators in named variables (an array makes GCC
// store every accumulator each iteration, which halves the rate), each
// pinned to a register by an empty asm so the loop stays 12 back-to-back
// FMAs; 12 chains cover 2 pipes x 4-cycle latency with room to spare. `V`
// is a GCC vector type the function's target fills a register with (the
// body is a macro, not a template, so that clang checks the asm operands
// against that target); GCC and clang contract `a * m + c` to one FMA.
// Yields the FLOPs done.
#define SHARC_FMA_LOOP_BODY(V)                                                                 \
  V a0 = V{} + 0.f, a1 = V{} + 0.1f, a2 = V{} + 0.2f, a3 = V{} + 0.3f, a4 = V{} + 0.4f,       \
    a5 = V{} + 0.5f, a6 = V{} + 0.6f, a7 = V{} + 0.7f, a8 = V{} + 0.8f, a9 = V{} + 0.9f,      \
    a10 = V{} + 1.0f, a11 = V{} + 1.1f;                                                         \
  const V m = V{} + 0.999999f, c = V{} + 1e-7f;                                                 \
  for (int64_t i = 0; i < iters; ++i) {                                                         \
    a0 = a0 * m + c;                                                                            \
    a1 = a1 * m + c;                                                                            \
    a2 = a2 * m + c;                                                                            \
    a3 = a3 * m + c;                                                                            \
    a4 = a4 * m + c;                                                                            \
    a5 = a5 * m + c;                                                                            \
    a6 = a6 * m + c;                                                                            \
    a7 = a7 * m + c;                                                                            \
    a8 = a8 * m + c;                                                                            \
    a9 = a9 * m + c;                                                                            \
    a10 = a10 * m + c;                                                                          \
    a11 = a11 * m + c;                                                                          \
    asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));            \
    asm volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));          \
  }                                                                                             \
  V s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)) + ((a8 + a9) + (a10 + a11));          \
  asm volatile("" : "+v"(s));                                                                   \
  return static_cast<double>(iters) * 12 * (sizeof(V) / sizeof(float)) * 2;

typedef float Zmm __attribute__((vector_size(64)));
typedef float Ymm __attribute__((vector_size(32)));
__attribute__((target("avx512f"), noinline)) double FmaLoop512(int64_t iters) {
  SHARC_FMA_LOOP_BODY(Zmm)
}
__attribute__((target("avx2,fma"), noinline)) double FmaLoop256(int64_t iters) {
  SHARC_FMA_LOOP_BODY(Ymm)
}
#undef SHARC_FMA_LOOP_BODY

bool HasAvx512() { return __builtin_cpu_supports("avx512f"); }

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `work(t)` on `threads` threads at once; returns the wall time.
template <typename Work>
double TimeOnThreads(int threads, const Work& work) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& th : pool) th.join();
  return Seconds(start);
}

MachineLimits Measure(int threads) {
  MachineLimits limits;
  limits.threads = threads;
  // FMA: 1M iterations of 12 vector FMAs, ~2-5 ms; the best of 9.
  constexpr int64_t kIters = 1'000'000;
  const double flops_per_thread = FmaLoop(1) * kIters;  // one iteration's FLOPs, times kIters
  for (int rep = 0; rep < 9 && HasFma(); ++rep) {
    const double s = TimeOnThreads(threads, [](int) { FmaLoop(kIters); });
    limits.fma_gflops = std::max(limits.fma_gflops, flops_per_thread * threads / s / 1e9);
  }
  // Memory: each thread copies its own 64 MiB (well past any L3); the
  // best of 5, counting the bytes read and written.
  constexpr size_t kBytes = size_t{64} << 20;
  std::vector<std::unique_ptr<char[]>> from, to;
  for (int t = 0; t < threads; ++t) {
    from.emplace_back(new char[kBytes]);
    to.emplace_back(new char[kBytes]);
    std::memset(from.back().get(), 1, kBytes);  // fault the pages in first
    std::memset(to.back().get(), 0, kBytes);
  }
  for (int rep = 0; rep < 5; ++rep) {
    const double s = TimeOnThreads(
        threads, [&](int t) { std::memcpy(to[t].get(), from[t].get(), kBytes); });
    limits.memory_gbps = std::max(limits.memory_gbps, 2.0 * kBytes * threads / s / 1e9);
  }
  return limits;
}

std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      return std::string(absl::StripAsciiWhitespace(line.substr(line.find(':') + 1)));
    }
  }
  return "unknown";
}

}  // namespace

double FmaLoop(int64_t iters) {
  if (HasAvx512()) return FmaLoop512(iters);
  if (HasFma()) return FmaLoop256(iters);
  return 0;
}

bool HasFma() {
  return HasAvx512() || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
}

MachineLimits MeasuredMachineLimits(int threads, const std::string& cache_dir) {
  threads = std::max(threads, 1);
  // One line per measurement: "<threads> <fma GFLOP/s> <GB/s> <cpu model>".
  const std::string path = cache_dir.empty() ? "" : cache_dir + "/machine_limits";
  const std::string model = CpuModelName();
  if (!path.empty()) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      MachineLimits cached;
      std::string rest;
      if (fields >> cached.threads >> cached.fma_gflops >> cached.memory_gbps &&
          std::getline(fields, rest) && rest == " " + model && cached.threads == threads) {
        return cached;
      }
    }
  }
  MachineLimits measured = Measure(threads);
  if (!path.empty()) {
    std::ofstream out(path, std::ios::app);
    out << measured.threads << " " << measured.fma_gflops << " " << measured.memory_gbps << " "
        << model << "\n";
  }
  return measured;
}

}  // namespace sharc::runtime
