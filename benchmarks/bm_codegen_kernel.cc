// Any HLO module's entry, compiled as one Halide kernel and timed: for
// taking a kernel apart (variants of it in files side by side), or timing
// a kernel the other benchmarks do not cover.
//   HL_NUM_THREADS=1 ./bm_codegen_kernel --hlo=softmax.hlo [--vs=other.hlo] [benchmark flags...]
// Counter GBps = bytes of the parameters and the result per run / time, so
// it compares with BM_StreamCopy's in bm_codegen_elementwise. Inputs are
// filled with a pattern in [-1, 1) (bm_codegen_support.h).
//
// With a second module, --vs=B.hlo, the two kernels are compiled in one
// process and run in alternation: 16 rounds (which one goes first
// alternates), in each the median of at least 3 runs and 20 ms of either.
// BM_KernelPair reports the median over rounds of B's rate over A's; on a
// host whose speed drifts by tens of percent from one minute to the next, a
// comparison made in the same seconds holds still where separate runs do
// not. A rate is work per second: 2 FLOPs per multiply-add of the dots if
// both modules have dots, else bytes as for GBps, so different shapes of
// one op compare per FLOP. a_* and b_* are each side's own median rate. The
// kernel cache keys a kernel by its canonical text, which ignores names: two
// files that differ only in names are one kernel, reported as
// same_kernel=1 (an A/A pairing, which is how to see the noise).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"
#include "spmd/cost_model.h"

namespace sharc::bench {
namespace {

void BM_Kernel(benchmark::State& state, const std::string& text, double bytes) {
  CompiledEntry e = CompileEntry(text);
  for (auto _ : state) e.Run();
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(state.iterations()) * bytes / 1e9,
                                              benchmark::Counter::kIsRate);
  state.counters["compile_ms"] = e.compile_ms;
}

// The FLOPs of the entry's dots, as the cost model counts them.
double DotFlops(const hlo::Computation& main) {
  double flops = 0;
  for (const hlo::Instruction* inst : main.instructions()) {
    if (inst->opcode() == hlo::Opcode::kDot) flops += spmd::CostOf(*inst).flops;
  }
  return flops;
}

// The median; for an even count, the mean of the two middle values.
double Median(std::vector<double> v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

// Seconds of one run of `e`: the median of at least 3 runs and 20 ms of
// them, so that a kernel of microseconds is not timed by its first run.
double MedianRun(CompiledEntry& e) {
  constexpr int kMinRuns = 3;
  constexpr double kMinSeconds = 0.02;
  std::vector<double> t;
  double total = 0;
  while (static_cast<int>(t.size()) < kMinRuns || total < kMinSeconds) {
    const auto start = std::chrono::steady_clock::now();
    e.Run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    total += t.back();
  }
  return Median(std::move(t));
}

struct KernelModule {
  std::string text;  // "" if the file is unusable (reported)
  double bytes = 0;  // of the parameters and the result
  double flops = 0;  // of the dots
};

void BM_KernelPair(benchmark::State& state, const KernelModule& a, const KernelModule& b) {
  CompiledEntry ka = CompileEntry(a.text);
  CompiledEntry kb = CompileEntry(b.text);
  const bool per_flop = a.flops > 0 && b.flops > 0;
  if (!per_flop && (a.flops > 0 || b.flops > 0)) {
    fprintf(stderr, "bm_codegen_kernel: only one module has dots; rates are per byte\n");
  }
  const double a_work = per_flop ? a.flops : a.bytes, b_work = per_flop ? b.flops : b.bytes;
  constexpr int kRounds = 16;
  std::vector<double> a_rates, b_rates, ratios;
  for (auto _ : state) {
    for (int round = 0; round < kRounds; ++round) {
      double ta = 0, tb = 0;
      if (round % 2 == 0) {
        ta = MedianRun(ka);
        tb = MedianRun(kb);
      } else {
        tb = MedianRun(kb);
        ta = MedianRun(ka);
      }
      a_rates.push_back(a_work / ta / 1e9);
      b_rates.push_back(b_work / tb / 1e9);
      ratios.push_back(b_rates.back() / a_rates.back());
    }
  }
  const char* unit = per_flop ? "GFLOPS" : "GBps";
  state.counters[absl::StrCat("a_", unit)] = Median(a_rates);
  state.counters[absl::StrCat("b_", unit)] = Median(b_rates);
  state.counters["b_rate_over_a"] = Median(ratios);
  state.counters["same_kernel"] = ka.kernel == kb.kernel ? 1 : 0;
}

// The module in `path`, checked (parsed, verified, lowerable as one kernel)
// so that a bad file is reported rather than aborting inside CompileEntry;
// an empty text and a message on failure.
KernelModule LoadKernelModule(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fprintf(stderr, "bm_codegen_kernel: cannot read %s\n", path.c_str());
    return {};
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<EntryGraph> entry = TryParseEntryGraph(text.str());
  if (!entry.ok()) {
    fprintf(stderr, "bm_codegen_kernel: %s: %s\n", path.c_str(),
            std::string(entry.status().message()).c_str());
    return {};
  }
  if (absl::Status lowerable = codegen::CheckLowerable(entry->graph); !lowerable.ok()) {
    fprintf(stderr, "bm_codegen_kernel: %s: %s\n", path.c_str(),
            std::string(lowerable.message()).c_str());
    return {};
  }
  const hlo::Computation& main = *entry->module->entry();
  KernelModule module;
  module.bytes = static_cast<double>(main.root()->shape().byte_size());
  for (const hlo::Instruction* p : main.parameters()) module.bytes += static_cast<double>(p->shape().byte_size());
  module.flops = DotFlops(main);
  if (module.bytes <= 0) {
    fprintf(stderr, "bm_codegen_kernel: %s moves no bytes; there is nothing to time\n",
            path.c_str());
    return {};
  }
  module.text = text.str();
  return module;
}

}  // namespace
}  // namespace sharc::bench

int main(int argc, char** argv) {
  std::string path, vs_path;
  int hlo_flags = 0, vs_flags = 0;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    constexpr std::string_view kHlo = "--hlo=", kVs = "--vs=";
    if (arg.substr(0, kHlo.size()) == kHlo) {
      path = arg.substr(kHlo.size());
      ++hlo_flags;
    } else if (arg.substr(0, kVs.size()) == kVs) {
      vs_path = arg.substr(kVs.size());
      ++vs_flags;
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (hlo_flags != 1 || path.empty() || vs_flags > 1 || (vs_flags == 1 && vs_path.empty())) {
    fprintf(stderr, "usage: bm_codegen_kernel --hlo=FILE [--vs=FILE] [benchmark flags...]\n");
    return 2;
  }
  const sharc::bench::KernelModule module = sharc::bench::LoadKernelModule(path);
  if (module.text.empty()) return 2;
  if (vs_flags == 0) {
    benchmark::RegisterBenchmark(("BM_Kernel/" + path).c_str(), sharc::bench::BM_Kernel,
                                 module.text, module.bytes)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  } else {
    const sharc::bench::KernelModule vs = sharc::bench::LoadKernelModule(vs_path);
    if (vs.text.empty()) return 2;
    benchmark::RegisterBenchmark(("BM_KernelPair/" + path + "/" + vs_path).c_str(),
                                 sharc::bench::BM_KernelPair, module, vs)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
