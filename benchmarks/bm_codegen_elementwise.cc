// Fused elementwise and reduction kernels against a plain loop compiled with
// -O3 -march=native -ffast-math and against STREAM copy, in the same run:
//   HL_NUM_THREADS=1 OMP_NUM_THREADS=1 ./bm_codegen_elementwise
// Counter GBps = bytes read + written per run / time.
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
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

void BM_StreamCopy(benchmark::State& state) {
  std::vector<float> a(kChain, 1.f), c(kChain);
  for (auto _ : state) {
    std::memcpy(c.data(), a.data(), kChain * sizeof(float));
    benchmark::DoNotOptimize(c.data());
  }
  SetBytes(state, 2.0 * kChain * sizeof(float));
}

void BM_HalideTanhChain(benchmark::State& state) {
  CompiledEntry e = CompileEntry(absl::StrCat(
      "HloModule chain\nENTRY main {\n  x = f32[", kChain, "] parameter(0)\n  a = f32[] parameter(1)\n",
      "  b = f32[] parameter(2)\n  ba = f32[", kChain, "] broadcast(a), dimensions={}\n",
      "  bb = f32[", kChain, "] broadcast(b), dimensions={}\n  m = f32[", kChain,
      "] multiply(ba, x)\n  s = f32[", kChain, "] add(m, bb)\n  ROOT t = f32[", kChain,
      "] tanh(s)\n}\n"));
  for (auto _ : state) e.Run();
  SetBytes(state, 2.0 * kChain * sizeof(float));
  state.counters["compile_ms"] = e.compile_ms;
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

void BM_HalideSoftmaxRows(benchmark::State& state) {
  // softmax over rows of [4096,1024] as the fusion pass would see it.
  CompiledEntry e = CompileEntry(R"(
HloModule softmax
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
max { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] maximum(x, y) }
ENTRY main {
  x = f32[4096,1024] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[4096] reduce(x, ninf), dimensions={1}, to_apply=max
  bm = f32[4096,1024] broadcast(m), dimensions={0}
  s = f32[4096,1024] subtract(x, bm)
  e = f32[4096,1024] exponential(s)
  d = f32[4096] reduce(e, zero), dimensions={1}, to_apply=add
  bd = f32[4096,1024] broadcast(d), dimensions={0}
  ROOT y = f32[4096,1024] divide(e, bd)
}
)");
  for (auto _ : state) e.Run();
  SetBytes(state, 2.0 * 4096 * 1024 * sizeof(float));
  state.counters["compile_ms"] = e.compile_ms;
}

BENCHMARK(BM_StreamCopy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideTanhChain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopTanhChain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LoopSum)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideSoftmaxRows)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

BENCHMARK_MAIN();
