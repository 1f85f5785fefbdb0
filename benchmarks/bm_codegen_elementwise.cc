// Fused elementwise and reduction kernels against a plain loop compiled with
// -O3 -march=native -ffast-math and against STREAM copy (the read-only sum
// also against STREAM's read-only kernel, BM_StreamReadSum), in the same run:
//   HL_NUM_THREADS=1 OMP_NUM_THREADS=1 ./bm_codegen_elementwise
// (OMP_NUM_THREADS=2 gives kernels two threads; compare with BM_StreamCopy/2.)
// Counter GBps = bytes read + written per run / time.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"

namespace sharc::bench {
namespace {

constexpr int64_t kChain = int64_t{1} << 24;  // 16M floats
constexpr int64_t kSum = int64_t{1} << 26;    // 64M floats

void SetBytes(benchmark::State& state, double bytes) {
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(state.iterations()) * bytes / 1e9,
                                              benchmark::Counter::kIsRate);
}

// A zeroed f32 buffer of `n` from the runtime's allocator (2 MiB aligned,
// huge pages offered), as the kernels' own buffers are.
runtime::Buffer F32Buffer(int64_t n) {
  absl::StatusOr<runtime::Buffer> b =
      runtime::Buffer::Allocate(hlo::Shape(hlo::PrimitiveType::kF32, {n}), /*zero=*/true);
  if (!b.ok()) std::abort();
  return *std::move(b);
}

// The hand-written peers below use the widest vectors of the machine they
// are built for (this file is compiled with -march=native): 64 bytes with
// AVX-512, 32 with AVX2 (Zen 3), 16 with SSE. Loads and adds are GCC vector
// extensions; the non-temporal store is the one intrinsic per width.
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif
typedef float Vec __attribute__((vector_size(kVecBytes)));
// The same vector at float alignment, for loads from any float offset.
typedef float UnalignedVec __attribute__((vector_size(kVecBytes), aligned(alignof(float))));
constexpr int kVecLanes = kVecBytes / sizeof(float);

inline Vec LoadVec(const float* p) { return *reinterpret_cast<const UnalignedVec*>(p); }
inline void StreamVec(float* p, Vec v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512>(v));
#elif defined(__AVX__)
  _mm256_stream_ps(p, reinterpret_cast<__m256>(v));
#else
  _mm_stream_ps(p, reinterpret_cast<__m128>(v));
#endif
}

// STREAM copy on buffers from the runtime's allocator (2 MiB aligned, huge
// pages offered), as the kernels' own buffers are: the peer gets the same
// pages. glibc's memcpy writes this size with non-temporal stores.
void BM_StreamCopy(benchmark::State& state) {
  runtime::Buffer a = F32Buffer(kChain), c = F32Buffer(kChain);
  // Arg: threads, each copying its own contiguous part (the 2-thread peer
  // for runs with OMP_NUM_THREADS=2; thread start-up is ~1% of a copy).
  const int threads = static_cast<int>(state.range(0));
  auto copy_part = [&](int t) {
    const int64_t begin = kChain * t / threads, end = kChain * (t + 1) / threads;
    std::memcpy(static_cast<float*>(c.data()) + begin, static_cast<const float*>(a.data()) + begin,
                static_cast<size_t>(end - begin) * sizeof(float));
  };
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (int t = 1; t < threads; ++t) helpers.emplace_back(copy_part, t);
    copy_part(0);
    for (std::thread& h : helpers) h.join();
    benchmark::DoNotOptimize(c.data());
  }
  SetBytes(state, 2.0 * kChain * sizeof(float));
}

// STREAM's read-only kernel, for the sum: kSum floats summed into 8 vector
// accumulators (enough independent adds to keep up with any memory), on the
// runtime's buffers, each thread over its own contiguous part. A read-only
// kernel is compared with this, not with copy: copy's bytes are half
// writes, and on this host one core reads at about half of copy's counted
// rate (docs/performance_log.md, session 7).
__attribute__((noinline)) float ReadSum(const float* p, int64_t n) {
  Vec s[8] = {};
  int64_t i = 0;
  for (; i + 8 * kVecLanes <= n; i += 8 * kVecLanes) {
    for (int k = 0; k < 8; ++k) s[k] += LoadVec(p + i + kVecLanes * k);
  }
  float tail = 0;
  for (; i < n; ++i) tail += p[i];
  const Vec t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (int l = 0; l < kVecLanes; ++l) tail += t[l];
  return tail;
}

void BM_StreamReadSum(benchmark::State& state) {
  runtime::Buffer a = F32Buffer(kSum);
  const int threads = static_cast<int>(state.range(0));
  std::vector<float> partial(static_cast<size_t>(threads));
  auto sum_part = [&](int t) {
    const int64_t begin = kSum * t / threads, end = kSum * (t + 1) / threads;
    partial[static_cast<size_t>(t)] = ReadSum(static_cast<const float*>(a.data()) + begin, end - begin);
  };
  for (auto _ : state) {
    std::vector<std::thread> helpers;
    for (int t = 1; t < threads; ++t) helpers.emplace_back(sum_part, t);
    sum_part(0);
    for (std::thread& h : helpers) h.join();
    benchmark::DoNotOptimize(partial.data());
  }
  SetBytes(state, 1.0 * kSum * sizeof(float));
}

// a*x+b over kChain floats, and tanh of it when `with_tanh`.
std::string ChainModule(bool with_tanh) {
  const std::string n = absl::StrCat("f32[", kChain, "]");
  return absl::StrCat("HloModule chain\nENTRY main {\n  x = ", n, " parameter(0)\n",
                      "  a = f32[] parameter(1)\n  b = f32[] parameter(2)\n",
                      "  ba = ", n, " broadcast(a), dimensions={}\n",
                      "  bb = ", n, " broadcast(b), dimensions={}\n",
                      "  m = ", n, " multiply(ba, x)\n", with_tanh ? "  s = " : "  ROOT s = ", n,
                      " add(m, bb)\n", with_tanh ? absl::StrCat("  ROOT t = ", n, " tanh(s)\n") : "",
                      "}\n");
}

void BM_HalideTanhChain(benchmark::State& state) {
  CompiledEntry e = CompileEntry(ChainModule(/*with_tanh=*/true));
  for (auto _ : state) e.Run();
  SetBytes(state, 2.0 * kChain * sizeof(float));
  state.counters["compile_ms"] = e.compile_ms;
}

// The memory floor of a kernel that reads and writes the chain's bytes.
void BM_HalideAffine(benchmark::State& state) {
  CompiledEntry e = CompileEntry(ChainModule(/*with_tanh=*/false));
  for (auto _ : state) e.Run();
  SetBytes(state, 2.0 * kChain * sizeof(float));
}

// Plain a*x+b loops with non-temporal stores and a prefetch per load, on
// the runtime's buffers: Arg 1 walks the array front to back (prefetching
// the next page), Arg 4 walks four pages side by side, four lines of each
// at a time (prefetching four pages ahead), as the kernels' schedule now
// does (codegen/pipeline_builder.cc). Against BM_StreamCopy/1 this shows
// what the loop order alone is worth on this machine.
template <int kPages>
__attribute__((noinline)) void AffinePages(const float* x, float* y, int64_t n) {
  const Vec a = Vec{} + 0.5f, b = Vec{} + 0.25f;
  constexpr int64_t kPage = 1024, kStep = 64;  // floats
  for (int64_t group = 0; group + kPages * kPage <= n; group += kPages * kPage) {
    for (int64_t i = 0; i < kPage; i += kStep) {
      for (int p = 0; p < kPages; ++p) {
        const int64_t at = group + p * kPage + i;
        for (int k = 0; k < kStep; k += kVecLanes) {
          _mm_prefetch(reinterpret_cast<const char*>(x + at + k + kPages * kPage), _MM_HINT_T1);
          StreamVec(y + at + k, a * LoadVec(x + at + k) + b);
        }
      }
    }
  }
  _mm_sfence();
}

void BM_LoopAffineStreams(benchmark::State& state) {
  runtime::Buffer x = F32Buffer(kChain), y = F32Buffer(kChain);
  const float* xp = static_cast<const float*>(x.data());
  float* yp = static_cast<float*>(y.data());
  for (auto _ : state) {
    if (state.range(0) == 4) {
      AffinePages<4>(xp, yp, kChain);
    } else {
      AffinePages<1>(xp, yp, kChain);
    }
    benchmark::DoNotOptimize(yp);
  }
  SetBytes(state, 2.0 * kChain * sizeof(float));
}

void BM_LoopTanhChain(benchmark::State& state) {
  std::vector<float> x(kChain), y(kChain);
  for (int64_t i = 0; i < kChain; ++i) x[i] = static_cast<float>(i % 2000) / 1000.f - 1.f;
  const float a = 0.5f, b = 0.25f;
  for (auto _ : state) {
    const float* xp = x.data();
    float* yp = y.data();
#pragma omp simd
    for (int64_t i = 0; i < kChain; ++i) yp[i] = std::tanh(a * xp[i] + b);
    benchmark::DoNotOptimize(y.data());
  }
  SetBytes(state, 2.0 * kChain * sizeof(float));
}

void BM_HalideSum(benchmark::State& state) {
  CompiledEntry e = CompileEntry(absl::StrCat(
      "HloModule sum\nadd { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }\n",
      "ENTRY main {\n  v = f32[", kSum, "] parameter(0)\n  z = f32[] constant(0)\n",
      "  ROOT s = f32[] reduce(v, z), dimensions={0}, to_apply=add\n}\n"));
  for (auto _ : state) e.Run();
  SetBytes(state, 1.0 * kSum * sizeof(float));
  state.counters["compile_ms"] = e.compile_ms;
}

void BM_LoopSum(benchmark::State& state) {
  std::vector<float> v(kSum, 0.5f);
  for (auto _ : state) {
    float s = 0;
    const float* p = v.data();
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < kSum; ++i) s += p[i];
    benchmark::DoNotOptimize(s);
  }
  SetBytes(state, 1.0 * kSum * sizeof(float));
}

// Row kernels run on [4096,1024] (16 MiB each way, from and to memory) and,
// as BM_...InCache, on [64,1024] (256 KiB each way, in L2). The in-cache
// rate is the kernel's compute floor: if it is below a ratio of STREAM copy,
// no memory schedule can bring the full-size kernel to that ratio.
constexpr int64_t kRows = 4096, kCacheRows = 64, kCols = 1024;

void RunRowKernel(benchmark::State& state, const std::string& module, int64_t rows) {
  CompiledEntry e = CompileEntry(module);
  for (auto _ : state) e.Run();
  SetBytes(state, 2.0 * rows * kCols * sizeof(float));
  state.counters["compile_ms"] = e.compile_ms;
}

void BM_HalideSoftmaxRows(benchmark::State& state) {
  RunRowKernel(state, SoftmaxRowsModule(kRows), kRows);
}

// Half of every row masked to -1e9: exp's results that round to zero must
// not cost more than the others (an underflowing multiply takes a microcode
// assist on Intel cores; docs/performance_log.md, session 7).
void BM_HalideMaskedSoftmaxRowsInCache(benchmark::State& state) {
  RunRowKernel(state, SoftmaxRowsModule(kCacheRows, /*masked=*/true), kCacheRows);
}

void BM_HalideSoftmaxRowsInCache(benchmark::State& state) {
  RunRowKernel(state, SoftmaxRowsModule(kCacheRows), kCacheRows);
}

// The plain loop peer: per row, the max, then exp(x - max) written out and
// summed, then scaled, while the row is in L1.
void BM_LoopSoftmaxRows(benchmark::State& state) {
  std::vector<float> x(kRows * kCols), y(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) x[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float* xr = x.data() + r * kCols;
      float* yr = y.data() + r * kCols;
      float m = -INFINITY;
#pragma omp simd reduction(max : m)
      for (int64_t c = 0; c < kCols; ++c) m = std::max(m, xr[c]);
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < kCols; ++c) {
        yr[c] = std::exp(xr[c] - m);
        sum += yr[c];
      }
      const float inv = 1.f / sum;
#pragma omp simd
      for (int64_t c = 0; c < kCols; ++c) yr[c] *= inv;
    }
    benchmark::DoNotOptimize(y.data());
  }
  SetBytes(state, 2.0 * kRows * kCols * sizeof(float));
}

// layernorm over rows of [rows,1024] with a scale and a shift, in the
// two-pass form a frontend traces (mean, then the variance of x - mean).
std::string LayernormRowsModule(int64_t rows) {
  return absl::StrReplaceAll(R"(
HloModule layernorm
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  x = f32[$R,1024] parameter(0)
  gamma = f32[1024] parameter(1)
  beta = f32[1024] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(1024)
  eps = f32[] constant(1e-5)
  sum = f32[$R] reduce(x, zero), dimensions={1}, to_apply=add
  bn = f32[$R] broadcast(n), dimensions={}
  mean = f32[$R] divide(sum, bn)
  bmean = f32[$R,1024] broadcast(mean), dimensions={0}
  xc = f32[$R,1024] subtract(x, bmean)
  sq = f32[$R,1024] multiply(xc, xc)
  ss = f32[$R] reduce(sq, zero), dimensions={1}, to_apply=add
  var = f32[$R] divide(ss, bn)
  beps = f32[$R] broadcast(eps), dimensions={}
  ve = f32[$R] add(var, beps)
  rs = f32[$R] rsqrt(ve)
  brs = f32[$R,1024] broadcast(rs), dimensions={0}
  normed = f32[$R,1024] multiply(xc, brs)
  bg = f32[$R,1024] broadcast(gamma), dimensions={1}
  scaled = f32[$R,1024] multiply(normed, bg)
  bb = f32[$R,1024] broadcast(beta), dimensions={1}
  ROOT y = f32[$R,1024] add(scaled, bb)
}
)",
                             {{"$R", absl::StrCat(rows)}});
}

void BM_HalideLayernormRows(benchmark::State& state) {
  RunRowKernel(state, LayernormRowsModule(kRows), kRows);
}

void BM_HalideLayernormRowsInCache(benchmark::State& state) {
  RunRowKernel(state, LayernormRowsModule(kCacheRows), kCacheRows);
}

void BM_LoopLayernormRows(benchmark::State& state) {
  std::vector<float> x(kRows * kCols), y(kRows * kCols), gamma(kCols, 1.5f), beta(kCols, 0.25f);
  for (int64_t i = 0; i < kRows * kCols; ++i) x[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float* xr = x.data() + r * kCols;
      float* yr = y.data() + r * kCols;
      float sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < kCols; ++c) sum += xr[c];
      const float mean = sum / kCols;
      float ss = 0;
#pragma omp simd reduction(+ : ss)
      for (int64_t c = 0; c < kCols; ++c) ss += (xr[c] - mean) * (xr[c] - mean);
      const float rs = 1.f / std::sqrt(ss / kCols + 1e-5f);
#pragma omp simd
      for (int64_t c = 0; c < kCols; ++c) yr[c] = (xr[c] - mean) * rs * gamma[c] + beta[c];
    }
    benchmark::DoNotOptimize(y.data());
  }
  SetBytes(state, 2.0 * kRows * kCols * sizeof(float));
}

BENCHMARK(BM_StreamCopy)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StreamReadSum)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideTanhChain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideAffine)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopAffineStreams)->Arg(1)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopTanhChain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideSoftmaxRows)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideSoftmaxRowsInCache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideMaskedSoftmaxRowsInCache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopSoftmaxRows)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideLayernormRows)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideLayernormRowsInCache)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopLayernormRows)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

BENCHMARK_MAIN();
