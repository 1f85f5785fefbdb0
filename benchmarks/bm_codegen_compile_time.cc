// Kernel compile time and the kernel cache (codegen/kernel_compiler.h).
//
//   BM_ColdCompile/{gemm,tanh}  a kernel compiled from nothing: every
//       iteration points the compiler at a new, empty cache directory and
//       forgets the in-memory cache, so it lowers, runs LLVM, links the .so
//       and dlopens it. The Halide runtime is not in these figures: it is
//       compiled once per process (BM_RuntimeCompileOnce) and shared.
//       Counters split the time into phases (codegen::CompileStats).
//   BM_DiskCacheLoad/{gemm,tanh}  the same kernel found in the disk cache by
//       a process that has not loaded it yet: every iteration copies a
//       filled cache directory to a new path (outside the timing, so the
//       dlopen is a real load, not a reference count) and compiles; the
//       counter llvm_compiles must stay 0.
//   BM_RuntimeCompileOnce  the one-time part: the first compile in a process
//       with an empty cache (runtime + kernel) minus a cold kernel compile.
//   BM_LinkShared/{ld,cc}  the external link of a cold compile, on an object
//       of one empty function (the fixed cost of that step): `ld -shared`,
//       which the compiler runs, and `cc -shared` through a shell, its
//       fallback (about 10 ms more).
//
// Issue 6 targets: cold < 100 ms per GEMM, < 40 ms per elementwise kernel;
// < 1 ms per kernel from the disk cache; no LLVM on the second run.
//
//   SHARC_CACHE_DIR is ignored: everything goes below a fresh
//   /tmp/sharc_bm_compile_<pid>, removed at exit.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"

namespace sharc::bench {
namespace {

namespace fs = std::filesystem;
using codegen::KernelCompiler;

// The elementwise kernel of bm_codegen_elementwise: tanh(a*x+b) on 16M f32.
std::string TanhChainText() {
  const int64_t n = int64_t{1} << 24;
  return absl::StrCat(
      "HloModule chain\nENTRY main {\n  x = f32[", n, "] parameter(0)\n  a = f32[] parameter(1)\n",
      "  b = f32[] parameter(2)\n  ba = f32[", n, "] broadcast(a), dimensions={}\n",
      "  bb = f32[", n, "] broadcast(b), dimensions={}\n  m = f32[", n,
      "] multiply(ba, x)\n  s = f32[", n, "] add(m, bb)\n  ROOT t = f32[", n, "] tanh(s)\n}\n");
}

std::string KernelText(int64_t which) { return which == 0 ? GemmModuleText(1024) : TanhChainText(); }
const char* KernelLabel(int64_t which) { return which == 0 ? "gemm 1024" : "tanh(a*x+b) 16M"; }

// Never destroyed, so the exit handler can still read it.
const std::string& BaseDir() {
  static const std::string* dir = [] {
    auto* d = new std::string(absl::StrCat("/tmp/sharc_bm_compile_", getpid()));
    fs::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(BaseDir(), ec);
    });
    return d;
  }();
  return *dir;
}

// A new, empty directory below BaseDir().
std::string FreshDir(const std::string& tag) {
  static int counter = 0;
  std::string d = absl::StrCat(BaseDir(), "/", tag, counter++);
  fs::create_directories(d);
  return d;
}

// Compiles (aborting on error); returns milliseconds.
double TimedCompile(const codegen::KernelGraph& graph) {
  const auto start = std::chrono::steady_clock::now();
  auto k = KernelCompiler::Global().Compile(graph);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!k.ok()) {
    fprintf(stderr, "%s\n", std::string(k.status().message()).c_str());
    std::abort();
  }
  return ms;
}

// Makes sure the runtime is loaded, so that per-kernel figures exclude it.
void EnsureRuntimeLoaded() {
  static const bool done = [] {
    KernelCompiler& kc = KernelCompiler::Global();
    kc.set_cache_dir(FreshDir("warmup"));
    EntryGraph tiny = ParseEntryGraph(
        "HloModule tiny\nENTRY main {\n  x = f32[16] parameter(0)\n  ROOT n = f32[16] negate(x)\n}\n");
    TimedCompile(tiny.graph);
    kc.ClearMemoryCache();
    return true;
  }();
  (void)done;
}

void BM_RuntimeCompileOnce(benchmark::State& state) {
  KernelCompiler& kc = KernelCompiler::Global();
  const codegen::CompileStats before = kc.stats();
  if (before.llvm_compiles + before.disk_hits + before.memory_hits != 0) {
    state.SkipWithError("the runtime is already loaded (run this benchmark first, alone)");
    return;
  }
  EntryGraph e = ParseEntryGraph(TanhChainText());
  double first = 0, kernel = 0;
  for (auto _ : state) {
    kc.set_cache_dir(FreshDir("first"));
    first = TimedCompile(e.graph);  // runtime + kernel
    kc.ClearMemoryCache();
    kc.set_cache_dir(FreshDir("second"));
    kernel = TimedCompile(e.graph);  // kernel only
    kc.ClearMemoryCache();
  }
  state.counters["first_compile_ms"] = first;
  state.counters["kernel_ms"] = kernel;
  state.counters["runtime_ms"] = first - kernel;
}

void BM_ColdCompile(benchmark::State& state, int64_t which) {
  EnsureRuntimeLoaded();
  KernelCompiler& kc = KernelCompiler::Global();
  EntryGraph e = ParseEntryGraph(KernelText(which));
  const codegen::CompileStats before = kc.stats();
  for (auto _ : state) {
    state.PauseTiming();
    kc.ClearMemoryCache();
    kc.set_cache_dir(FreshDir("cold"));
    state.ResumeTiming();
    auto k = kc.Compile(e.graph);
    if (!k.ok()) {
      state.SkipWithError(std::string(k.status().message()).c_str());
      return;
    }
  }
  const codegen::CompileStats after = kc.stats();
  const double iterations = static_cast<double>(state.iterations());
  state.counters["llvm_compiles_per_iter"] =
      static_cast<double>(after.llvm_compiles - before.llvm_compiles) / iterations;
  // Where a cold compile's time goes, in ms per kernel (CompileStats).
  auto phase_ms = [&](int64_t after_us, int64_t before_us) {
    return static_cast<double>(after_us - before_us) / 1000.0 / iterations;
  };
  state.counters["build_ms"] = phase_ms(after.build_us, before.build_us);
  state.counters["lower_ms"] = phase_ms(after.lower_us, before.lower_us);
  state.counters["llvm_ir_ms"] = phase_ms(after.llvm_ir_us, before.llvm_ir_us);
  state.counters["object_ms"] = phase_ms(after.object_us, before.object_us);
  state.counters["link_ms"] = phase_ms(after.link_us, before.link_us);
  state.counters["load_ms"] = phase_ms(after.load_us, before.load_us);
  state.SetLabel(KernelLabel(which));
}

void BM_DiskCacheLoad(benchmark::State& state, int64_t which) {
  EnsureRuntimeLoaded();
  KernelCompiler& kc = KernelCompiler::Global();
  EntryGraph e = ParseEntryGraph(KernelText(which));
  const std::string filled = FreshDir("filled");
  kc.ClearMemoryCache();
  kc.set_cache_dir(filled);
  TimedCompile(e.graph);
  const codegen::CompileStats before = kc.stats();
  for (auto _ : state) {
    state.PauseTiming();
    kc.ClearMemoryCache();
    const std::string copy = FreshDir("copy");
    fs::copy(filled, copy, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    kc.set_cache_dir(copy);
    state.ResumeTiming();
    auto k = kc.Compile(e.graph);
    if (!k.ok()) {
      state.SkipWithError(std::string(k.status().message()).c_str());
      return;
    }
  }
  const codegen::CompileStats after = kc.stats();
  const double iters = static_cast<double>(state.iterations());
  state.counters["llvm_compiles"] = static_cast<double>(after.llvm_compiles - before.llvm_compiles);
  state.counters["disk_hits_per_iter"] = static_cast<double>(after.disk_hits - before.disk_hits) / iters;
  if (after.llvm_compiles != before.llvm_compiles) state.SkipWithError("a disk-cache load invoked LLVM");
  state.SetLabel(KernelLabel(which));
}

void BM_LinkShared(benchmark::State& state, bool use_ld) {
  const std::string dir = FreshDir(use_ld ? "ld" : "cc");
  const std::string src = dir + "/f.c", obj = dir + "/f.o", so = dir + "/f.so";
  if (FILE* f = fopen(src.c_str(), "w")) {
    fputs("int sharc_bm_f(void) { return 0; }\n", f);
    fclose(f);
  }
  if (std::system(absl::StrCat("cc -c -fPIC -o '", obj, "' '", src, "'").c_str()) != 0) {
    state.SkipWithError("cc -c failed");
    return;
  }
  // std::system also pays for the shell, as the fallback does; the
  // compiler spawns ld without one, so this overstates ld a little.
  const std::string link = use_ld ? absl::StrCat("exec ld -shared -o '", so, "' '", obj, "'")
                                  : absl::StrCat("cc -shared -o '", so, "' '", obj, "' -lm");
  for (auto _ : state) {
    if (std::system(link.c_str()) != 0) {
      state.SkipWithError("link failed");
      return;
    }
  }
}

// Registered first: BM_RuntimeCompileOnce needs a process that has not
// loaded the runtime yet.
BENCHMARK(BM_RuntimeCompileOnce)->Iterations(1)->Unit(benchmark::kMillisecond);
// Every iteration leaves one more library loaded (kernels are never
// unloaded), so the iteration counts are bounded.
BENCHMARK_CAPTURE(BM_ColdCompile, gemm, 0)->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ColdCompile, tanh, 1)->Iterations(15)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DiskCacheLoad, gemm, 0)->Iterations(100)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_DiskCacheLoad, tanh, 1)->Iterations(100)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_LinkShared, ld, true)->Iterations(20)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_LinkShared, cc, false)->Iterations(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sharc::bench

BENCHMARK_MAIN();
