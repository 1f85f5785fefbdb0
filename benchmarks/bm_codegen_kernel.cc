// Any HLO module's entry, compiled as one Halide kernel and timed: for
// taking a kernel apart (variants of it in files side by side), or timing
// a kernel the other benchmarks do not cover.
//   HL_NUM_THREADS=1 ./bm_codegen_kernel --hlo=softmax.hlo [benchmark flags...]
// Counter GBps = bytes of the parameters and the result per run / time, so
// it compares with BM_StreamCopy's in bm_codegen_elementwise. Inputs are
// filled with a pattern in [-1, 1) (bm_codegen_support.h).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/bm_codegen_support.h"

namespace sharc::bench {
namespace {

void BM_Kernel(benchmark::State& state, const std::string& text, double bytes) {
  CompiledEntry e = CompileEntry(text);
  for (auto _ : state) e.Run();
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(state.iterations()) * bytes / 1e9,
                                              benchmark::Counter::kIsRate);
  state.counters["compile_ms"] = e.compile_ms;
}

// The module in `path`, checked so that a bad file is reported rather than
// aborting inside CompileEntry; "" and a message on failure.
std::string LoadKernelModule(const std::string& path, double* bytes) {
  std::ifstream in(path);
  if (!in) {
    fprintf(stderr, "bm_codegen_kernel: cannot read %s\n", path.c_str());
    return "";
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<EntryGraph> entry = TryParseEntryGraph(text.str());
  if (!entry.ok()) {
    fprintf(stderr, "bm_codegen_kernel: %s: %s\n", path.c_str(),
            std::string(entry.status().message()).c_str());
    return "";
  }
  const hlo::Computation& main = *entry->module->entry();
  *bytes = static_cast<double>(main.root()->shape().byte_size());
  for (const hlo::Instruction* p : main.parameters()) *bytes += static_cast<double>(p->shape().byte_size());
  return text.str();
}

}  // namespace
}  // namespace sharc::bench

int main(int argc, char** argv) {
  std::string path;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    constexpr std::string_view kFlag = "--hlo=";
    if (std::string_view(argv[i]).substr(0, kFlag.size()) == kFlag) {
      path = argv[i] + kFlag.size();
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (path.empty()) {
    fprintf(stderr, "usage: bm_codegen_kernel --hlo=FILE [benchmark flags...]\n");
    return 2;
  }
  double bytes = 0;
  const std::string text = sharc::bench::LoadKernelModule(path, &bytes);
  if (text.empty()) return 2;
  benchmark::RegisterBenchmark(("BM_Kernel/" + path).c_str(), sharc::bench::BM_Kernel, text, bytes)
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
