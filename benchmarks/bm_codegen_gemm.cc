// GEMM: the Halide dot kernel (codegen/dot_lowering.cc's tiled schedule)
// against OpenBLAS cblas_sgemm in the same run, f32 row-major N x N x N.
// Thread counts come from the environment so both libraries get the same:
//   HL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX ./bm_codegen_gemm
// (OPENBLAS_CORETYPE=SkylakeX: see perf_anchors.md, the harness may force
// the slower Haswell kernels). Counter GFLOPS = 2N^3 / time.
#include <cblas.h>

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"

namespace sharc::bench {
namespace {

std::string GemmModule(int64_t n) {
  const std::string d = absl::StrCat("[", n, ",", n, "]");
  return absl::StrCat("HloModule gemm\nENTRY main {\n  a = f32", d, " parameter(0)\n  b = f32", d,
                      " parameter(1)\n  ROOT c = f32", d,
                      " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
}

void BM_HalideGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  CompiledEntry e = CompileEntry(GemmModule(n));
  for (auto _ : state) e.Run();
  state.counters["GFLOPS"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e9, benchmark::Counter::kIsRate);
  state.counters["compile_ms"] = e.compile_ms;
}

void BM_OpenBlasSgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> a(static_cast<size_t>(n * n)), b(a.size()), c(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
    b[i] = a[i];
  }
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(n),
                static_cast<int>(n), 1.f, a.data(), static_cast<int>(n), b.data(), static_cast<int>(n),
                0.f, c.data(), static_cast<int>(n));
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK(BM_HalideGemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpenBlasSgemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

BENCHMARK_MAIN();
