// Halide's own autoschedulers (the Mullapudi2016, Li2018 and Adams2019
// plugins Debian's libhalide14 ships) against sharc's hand-written schedules,
// in the same run, on the kernels of the codegen targets: GEMM and softmax
// over rows. The algorithm each autoscheduler gets is the plain definition
// (what a user would write); sharc's kernel is compiled from HLO as `sharc
// run` would.
//   HL_NUM_THREADS=1 ./bm_halide_autoschedulers     (parallelism = HL_NUM_THREADS)
// Counters: GFLOPS (GEMM), GBps (softmax: bytes read + written), schedule_s
// (the autoscheduler's own time, once).
#include <Halide.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"
#include "codegen/host_target.h"

namespace sharc::bench {
namespace {

constexpr const char* kPluginDir = "/usr/lib/x86_64-linux-gnu/halide14/";
constexpr int kRows = 4096, kCols = 1024;

int Threads() {
  const char* env = std::getenv("HL_NUM_THREADS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 1;
}

// Loads the plugin once; false if the package does not ship it.
bool LoadAutoscheduler(const std::string& name) {
  static std::set<std::string> loaded;
  if (loaded.count(name) > 0) return true;
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  const std::string path = std::string(kPluginDir) + "libautoschedule_" + lower + ".so";
  if (!std::ifstream(path).good()) return false;
  Halide::load_plugin(path);
  loaded.insert(name);
  return true;
}

Halide::Target JitTarget() {
  return Halide::Target(codegen::HostTargetName()).with_feature(Halide::Target::NoAsserts);
}

// Schedules `p` with `autoscheduler` (estimates must be set) and JIT-compiles
// it; returns the autoscheduler's time in seconds.
double AutoscheduleAndCompile(Halide::Pipeline& p, const std::string& autoscheduler) {
  const auto start = std::chrono::steady_clock::now();
  Halide::MachineParams params(Threads(), 32 * 1024 * 1024, 40);
  p.auto_schedule(autoscheduler, JitTarget(), params);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.compile_jit(JitTarget());
  return seconds;
}

void FillPattern(Halide::Buffer<float>& b) {
  float* p = b.data();
  for (int64_t i = 0; i < static_cast<int64_t>(b.number_of_elements()); ++i)
    p[i] = static_cast<float>((i * 7919) % 2000) / 1000.f - 1.f;
}

void SetGemmCounters(benchmark::State& state, int64_t n) {
  state.counters["GFLOPS"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 2.0 * n * n * n / 1e9, benchmark::Counter::kIsRate);
}

void SetSoftmaxCounters(benchmark::State& state) {
  state.counters["GBps"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * kRows * kCols * 4.0 / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_AutoscheduledGemm(benchmark::State& state, const std::string& autoscheduler) {
  const int n = static_cast<int>(state.range(0));
  if (!LoadAutoscheduler(autoscheduler)) {
    state.SkipWithError(("no " + autoscheduler + " plugin in " + kPluginDir).c_str());
    return;
  }
  // Row-major C[y][x] = sum_k A[y][k] * B[k][x]: Halide's first coordinate is
  // the innermost (column) one.
  Halide::ImageParam a(Halide::Float(32), 2, "a"), b(Halide::Float(32), 2, "b");
  Halide::Var x("x"), y("y");
  Halide::RDom k(0, n, "k");
  Halide::Func c("c");
  c(x, y) = 0.f;
  c(x, y) += a(k, y) * b(x, k);
  a.dim(0).set_estimate(0, n).dim(1).set_estimate(0, n);
  b.dim(0).set_estimate(0, n).dim(1).set_estimate(0, n);
  c.set_estimate(x, 0, n).set_estimate(y, 0, n);
  Halide::Pipeline p(c);
  double schedule_s = 0;
  try {
    schedule_s = AutoscheduleAndCompile(p, autoscheduler);
  } catch (const Halide::Error& e) {
    state.SkipWithError((autoscheduler + ": " + e.what()).c_str());
    return;
  }
  Halide::Buffer<float> ab(n, n), bb(n, n), cb(n, n);
  FillPattern(ab);
  FillPattern(bb);
  a.set(ab);
  b.set(bb);
  for (auto _ : state) p.realize(cb);
  SetGemmCounters(state, n);
  state.counters["schedule_s"] = schedule_s;
}

void BM_SharcGemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  CompiledEntry e = CompileEntry(GemmModuleText(n));
  for (auto _ : state) e.Run();
  SetGemmCounters(state, n);
}

void BM_AutoscheduledSoftmax(benchmark::State& state, const std::string& autoscheduler) {
  if (!LoadAutoscheduler(autoscheduler)) {
    state.SkipWithError(("no " + autoscheduler + " plugin in " + kPluginDir).c_str());
    return;
  }
  Halide::ImageParam in(Halide::Float(32), 2, "in");
  Halide::Var x("x"), y("y");
  Halide::RDom r(0, static_cast<int>(kCols), "r");
  Halide::Func m("m"), e("e"), s("s"), out("out");
  m(y) = Halide::maximum(in(r, y));
  e(x, y) = Halide::exp(in(x, y) - m(y));
  s(y) = Halide::sum(e(r, y));
  out(x, y) = e(x, y) / s(y);
  in.dim(0).set_estimate(0, kCols).dim(1).set_estimate(0, kRows);
  out.set_estimate(x, 0, kCols).set_estimate(y, 0, kRows);
  Halide::Pipeline p(out);
  double schedule_s = 0;
  try {
    schedule_s = AutoscheduleAndCompile(p, autoscheduler);
  } catch (const Halide::Error& err) {
    state.SkipWithError((autoscheduler + ": " + err.what()).c_str());
    return;
  }
  Halide::Buffer<float> ib(kCols, kRows), ob(kCols, kRows);
  FillPattern(ib);
  in.set(ib);
  for (auto _ : state) p.realize(ob);
  SetSoftmaxCounters(state);
  state.counters["schedule_s"] = schedule_s;
}

void BM_SharcSoftmax(benchmark::State& state) {
  CompiledEntry e = CompileEntry(SoftmaxRowsModule(4096));
  for (auto _ : state) e.Run();
  SetSoftmaxCounters(state);
}

#define SHARC_AUTOSCHEDULER_GEMM(name)                                                  \
  BENCHMARK_CAPTURE(BM_AutoscheduledGemm, name, std::string(#name))                     \
      ->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime()
SHARC_AUTOSCHEDULER_GEMM(Mullapudi2016);
SHARC_AUTOSCHEDULER_GEMM(Li2018);
SHARC_AUTOSCHEDULER_GEMM(Adams2019);
BENCHMARK(BM_SharcGemm)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AutoscheduledSoftmax, Mullapudi2016, std::string("Mullapudi2016"))
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AutoscheduledSoftmax, Li2018, std::string("Li2018"))
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_AutoscheduledSoftmax, Adams2019, std::string("Adams2019"))
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SharcSoftmax)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

BENCHMARK_MAIN();
