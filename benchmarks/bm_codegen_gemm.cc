// GEMM: the Halide dot kernel (codegen/dot_lowering.cc's tiled schedule)
// against OpenBLAS cblas_sgemm in the same run, f32 row-major N x N x N.
// Thread counts come from the environment so both libraries get the same:
//   HL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=SkylakeX ./bm_codegen_gemm
// (OPENBLAS_CORETYPE=SkylakeX on an AVX-512 host: see perf_anchors.md, the
// harness may force the slower Haswell kernels; on an AVX2 host leave it
// unset, and the OpenBLAS benchmarks refuse an AVX-512 core type there
// rather than die of SIGILL). Counter GFLOPS = 2N^3 / time.
//
// BM_FmaPeak/threads:{1,2} measures the FP32 FMA peak in the same run (the
// anchors' `fma` loop, perf_anchors.md §1.1), and both GEMMs report
// pct_of_peak (a rate counter, hence Google Benchmark's "/s"): GFLOPS as a
// percentage of a peak measured in-process for
// $HL_NUM_THREADS threads (default: all cores) just before the first GEMM
// (so pct_of_peak shares that run's clock, not BM_FmaPeak's).
// paired_pct_of_peak pairs every GEMM run with an FMA-loop window of the
// same FLOPs right after it (PairedPeak below) and reports the median pair.
// BM_GemmHalideOverOpenBlas interleaves the two libraries in ~30 ms blocks
// and reports the median ratio of their speeds (halide_over_openblas). The
// binary sets OPENBLAS_THREAD_TIMEOUT=20 for itself unless it is set (main).
#include <cblas.h>

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"
#include "runtime/kernel_loop_pool.h"
#include "runtime/machine_limits.h"

namespace sharc::bench {
namespace {

// The FMA loop is the runtime's (runtime/machine_limits.h: the widest FMA
// the CPU has, 12 independent vector FMAs an iteration), the one profiles
// measure kernels against.
using runtime::FmaLoop;
using runtime::HasFma;
bool HasAvx512() { return __builtin_cpu_supports("avx512f"); }
double FmaLoopFlopsPerIteration() { return FmaLoop(1); }

// Runs FmaLoop(iters) on `threads` std::threads at once; returns the FLOPs.
double RunFmaThreads(int threads, int64_t iters) {
  std::vector<std::thread> pool;
  std::vector<double> flops(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&flops, t, iters] { flops[static_cast<size_t>(t)] = FmaLoop(iters); });
  }
  for (std::thread& th : pool) th.join();
  double total = 0;
  for (double f : flops) total += f;
  return total;
}

// 2M iterations = 0.77 GFLOP per thread, about 5 ms at the anchors' peak.
constexpr int64_t kFmaIters = 2'000'000;

void BM_FmaPeak(benchmark::State& state) {
  if (!HasFma()) {
    state.SkipWithError("no AVX-512F or AVX2+FMA on this CPU");
    return;
  }
  const int threads = static_cast<int>(state.range(0));
  double flops = 0;
  for (auto _ : state) flops += RunFmaThreads(threads, kFmaIters);
  state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsRate);
}

int GemmThreads() {
  const char* v = std::getenv("HL_NUM_THREADS");
  const int n = v != nullptr ? std::atoi(v) : 0;
  return n > 0 ? n : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The FMA peak for the GEMMs' thread count, measured once per process: the
// best of 15 runs of about 5 ms (the host's noise only ever slows a run, and
// a low peak would flatter the GEMMs); 0 without FMA.
double PeakGflops() {
  static const double peak = [] {
    if (!HasFma()) return 0.0;
    std::vector<double> runs;
    for (int rep = 0; rep < 15; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      const double flops = RunFmaThreads(GemmThreads(), kFmaIters);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      runs.push_back(flops / s / 1e9);
    }
    const double best = *std::max_element(runs.begin(), runs.end());
    fprintf(stderr, "FMA peak for %d thread(s), measured in-process: %.1f GFLOP/s (best of 15)\n",
            GemmThreads(), best);
    return best;
  }();
  return peak;
}

// FLOPs of FmaLoop(iters) on each of `threads` threads, run as a kernel's
// parallel loop is (runtime/kernel_loop_pool.h): the same threads, already
// started, so a short window is not thread start-up, and no second pool
// competes with the kernels' for the cores. The work is cut into 8 tasks per
// thread, as the GEMM's is, so that a helper that wakes late takes fewer
// tasks instead of leaving the caller to run a whole half alone.
struct FmaTeamClosure {
  int64_t iters;
  std::atomic<int64_t> flops_done{0};
};

int FmaTeamTask(void*, int, uint8_t* closure) {
  auto* c = reinterpret_cast<FmaTeamClosure*>(closure);
  c->flops_done += static_cast<int64_t>(FmaLoop(c->iters));
  return 0;
}

double RunFmaTeam(int threads, int64_t iters) {
  constexpr int kTasksPerThread = 8;
  FmaTeamClosure c{std::max<int64_t>(1, iters / kTasksPerThread)};
  runtime::RunKernelParallelLoop(nullptr, FmaTeamTask, 0, threads * kTasksPerThread,
                                 reinterpret_cast<uint8_t*>(&c));
  return static_cast<double>(c.flops_done.load());
}

// The FMA peak paired with each GEMM run: after every GEMM (timed alone), the
// FMA loop runs for as many FLOPs on as many threads, and the pair's ratio of
// rates is kept. The host here preempts runs at random, and short windows
// run at a faster clock than long ones (the fastest 0.2 ms GEMM runs
// measured 118% of the best-of-15 peak taken over 5 ms windows; AVX-512
// frequency licences change on that time scale). A pair shares its moment,
// its window length and its clock; the median pair is the figure.
class PairedPeak {
 public:
  explicit PairedPeak(int64_t n) : flops_(2.0 * n * n * n) {}

  template <typename Gemm>
  void Run(benchmark::State& state, Gemm&& gemm) {
    const auto start = std::chrono::steady_clock::now();
    gemm();
    const auto mid = std::chrono::steady_clock::now();
    state.PauseTiming();
    if (HasFma()) {
      const int threads = GemmThreads();
      const auto fma_start = std::chrono::steady_clock::now();
      const double fma_flops =
          RunFmaTeam(threads, std::max<int64_t>(1, static_cast<int64_t>(flops_ / (threads * FmaLoopFlopsPerIteration()))));
      const double fma_s = Seconds(fma_start, std::chrono::steady_clock::now());
      ratios_.push_back((flops_ / Seconds(start, mid)) / (fma_flops / fma_s));
    }
    state.ResumeTiming();
  }

  // Median GEMM rate over paired peak, in percent; 0 without FMA.
  double MedianPercent() {
    if (ratios_.empty()) return 0;
    std::nth_element(ratios_.begin(), ratios_.begin() + ratios_.size() / 2, ratios_.end());
    return 100.0 * ratios_[ratios_.size() / 2];
  }

 private:
  static double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
  double flops_;
  std::vector<double> ratios_;
};

// GFLOPS and pct_of_peak (against the best-of-15 peak) from the mean time;
// paired_pct_of_peak from the pairs, if any.
void SetGemmCounters(benchmark::State& state, int64_t n, PairedPeak* paired) {
  const double gflop = static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e9;
  state.counters["GFLOPS"] = benchmark::Counter(gflop, benchmark::Counter::kIsRate);
  if (const double peak = PeakGflops(); peak > 0) {
    state.counters["pct_of_peak"] = benchmark::Counter(100.0 * gflop / peak, benchmark::Counter::kIsRate);
    if (paired != nullptr) state.counters["paired_pct_of_peak"] = paired->MedianPercent();
  }
}

void BM_HalideGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  PeakGflops();
  CompiledEntry e = CompileEntry(GemmModuleText(n));
  PairedPeak paired(n);
  for (auto _ : state) paired.Run(state, [&] { e.Run(); });
  SetGemmCounters(state, n, &paired);
  state.counters["compile_ms"] = e.compile_ms;
}

// True (and the benchmark marked skipped) when OPENBLAS_CORETYPE forces
// AVX-512 kernels on a CPU without AVX-512: OpenBLAS would die of SIGILL in
// the first sgemm.
bool SkipForUnusableOpenBlasCore(benchmark::State& state) {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  if (core == nullptr || HasAvx512()) return false;
  const std::string name(core);
  for (const char* avx512 : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
    if (strcasecmp(name.c_str(), avx512) == 0) {
      state.SkipWithError(("OPENBLAS_CORETYPE=" + name + " needs AVX-512, which this CPU lacks; unset it").c_str());
      return true;
    }
  }
  return false;
}

// One OpenBLAS sgemm of N x N x N on fixed operands.
class OpenBlasGemm {
 public:
  explicit OpenBlasGemm(int64_t n) : n_(static_cast<int>(n)), a_(static_cast<size_t>(n * n)), b_(a_.size()), c_(a_.size()) {
    for (size_t i = 0; i < a_.size(); ++i) {
      a_[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
      b_[i] = a_[i];
    }
  }
  void Run() {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n_, n_, n_, 1.f, a_.data(), n_, b_.data(), n_,
                0.f, c_.data(), n_);
    benchmark::DoNotOptimize(c_.data());
  }

 private:
  int n_;
  std::vector<float> a_, b_, c_;
};

void BM_OpenBlasSgemm(benchmark::State& state) {
  if (SkipForUnusableOpenBlasCore(state)) return;
  const int64_t n = state.range(0);
  OpenBlasGemm gemm(n);
  PeakGflops();
  // No paired peak: OpenBLAS's workers spin for a while after each call
  // and would take the paired FMA window's cores.
  for (auto _ : state) gemm.Run();
  SetGemmCounters(state, n, nullptr);
}

// log2 of the cycles OpenBLAS's idle workers spin after a call, as OpenBLAS
// 0.3 reads OPENBLAS_THREAD_TIMEOUT: a positive value clamped to [4, 30],
// else its default, 28.
int OpenBlasSpinLog2() {
  const char* env = std::getenv("OPENBLAS_THREAD_TIMEOUT");
  const int v = env != nullptr ? std::atoi(env) : 0;
  return v > 0 ? std::clamp(v, 4, 30) : 28;
}

// Halide against OpenBLAS in the same moments: rounds of about 30 ms of
// Halide runs, then as long of OpenBLAS runs, each round giving the ratio
// of their median run times. BM_HalideGemm and BM_OpenBlasSgemm above are
// timed in windows seconds to minutes apart, and this host's speed drifts
// by tens of percent between such windows (docs/performance_log.md, session 7),
// which decided some of their ratios. Counter halide_over_openblas is the
// median round's speed ratio (> 1: Halide faster); rounds alternate which
// library goes first, and the first run of each block, which pays the
// threads' wake-up, is dropped (at least 3 runs are kept: the median of 3
// at N=2048, where one run is 0.1 s).
// The blocks follow each other with no pause, and OpenBLAS's idle workers
// spin for 2^20 cycles (about 0.3 ms) rather than its default 2^28 (about
// 90 ms): main() below sets OPENBLAS_THREAD_TIMEOUT=20, which OpenBLAS reads
// when it loads, unless the caller chose a value. That still covers the gap
// between two calls of one block, but a worker no longer spins, yielding,
// through the next Halide block. It did: blocks in which Halide ran at one
// thread's speed while the OpenBLAS blocks between them kept both
// (N=512: 3.2-3.6 ms against 1.7-1.8, 2 threads). Until session 17 the round
// slept 200 ms after each OpenBLAS block instead; then every Halide block
// started after 200 ms of idle, and only half the OpenBLAS blocks did, and
// the ratio read 0.68-1.12 at N=256-512 on 2 threads, against 1.04-1.50
// with the short spin and no pause (docs/performance_log.md, session 17).
void BM_GemmHalideOverOpenBlas(benchmark::State& state) {
  if (SkipForUnusableOpenBlasCore(state)) return;
  const int64_t n = state.range(0);
  CompiledEntry halide = CompileEntry(GemmModuleText(n));
  OpenBlasGemm blas(n);
  constexpr int kRounds = 11;
  constexpr double kBlockSeconds = 0.03;
  auto median_run = [&](auto&& run) {
    std::vector<double> times;
    const auto block_start = std::chrono::steady_clock::now();
    for (int i = 0; i < 4 || std::chrono::duration<double>(std::chrono::steady_clock::now() - block_start).count() < kBlockSeconds; ++i) {
      const auto start = std::chrono::steady_clock::now();
      run();
      if (i > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
  };
  std::vector<double> ratios;
  for (auto _ : state) {
    ratios.clear();
    for (int round = 0; round < kRounds; ++round) {
      // Alternate which library goes first.
      double halide_s = 0, blas_s = 0;
      if (round % 2 == 0) {
        halide_s = median_run([&] { halide.Run(); });
        blas_s = median_run([&] { blas.Run(); });
      } else {
        blas_s = median_run([&] { blas.Run(); });
        halide_s = median_run([&] { halide.Run(); });
      }
      ratios.push_back(blas_s / halide_s);
    }
  }
  std::sort(ratios.begin(), ratios.end());
  state.counters["halide_over_openblas"] = ratios[ratios.size() / 2];
  state.counters["lowest_round"] = ratios.front();
  state.counters["openblas_spin_log2"] = OpenBlasSpinLog2();
}

BENCHMARK(BM_FmaPeak)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_HalideGemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OpenBlasSgemm)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GemmHalideOverOpenBlas)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

// OpenBLAS reads OPENBLAS_THREAD_TIMEOUT once, when the library loads, before
// main: so the process sets it and runs itself again (see
// BM_GemmHalideOverOpenBlas). A caller's own value is kept. It holds for
// every benchmark of the binary; BM_OpenBlasSgemm alone, back to back, ran
// the same with it as with the default (docs/performance_log.md, session 17).
int main(int argc, char** argv) {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT") == nullptr &&
      setenv("OPENBLAS_THREAD_TIMEOUT", "20", 1) == 0) {
    execv("/proc/self/exe", argv);
    // Still this process, whose OpenBLAS read no value: say so, and let
    // the counter report the spin in force.
    std::fprintf(stderr, "bm_codegen_gemm: cannot run itself again (%s); OpenBLAS's workers spin for its default time\n",
                 std::strerror(errno));
    unsetenv("OPENBLAS_THREAD_TIMEOUT");
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
