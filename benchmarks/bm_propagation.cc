// Propagation time on generated transformer-like modules of 5k..40k
// instructions, next to the time to parse and verify the same text: the
// ratio shows propagation stays within a small constant of reading the
// module, and the sizes show it grows linearly.
//   build/benchmarks/bm_propagation --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include "benchmarks/transformer_module.h"
#include "hlo/text/parser.h"
#include "spmd/propagation.h"

namespace sharc::benchmarks {
namespace {

void BM_ParseAndVerify(benchmark::State& state) {
  const std::string text = TransformerLikeModule(state.range(0));
  int64_t instructions = 0;
  for (auto _ : state) {
    auto module = hlo::ParseAndVerifyModule(text);
    if (!module.ok()) {
      state.SkipWithError(std::string(module.status().message()).c_str());
      return;
    }
    instructions = (*module)->entry()->instruction_count();
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["us_per_instruction"] = benchmark::Counter(
      static_cast<double>(instructions) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_Propagate(benchmark::State& state) {
  const std::string text = TransformerLikeModule(state.range(0));
  auto parsed = hlo::ParseAndVerifyModule(text);
  if (!parsed.ok()) {
    state.SkipWithError(std::string(parsed.status().message()).c_str());
    return;
  }
  int64_t instructions = (*parsed)->entry()->instruction_count();
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<hlo::Module> module = (*parsed)->Clone();
    state.ResumeTiming();
    auto result = spmd::PropagateShardings(*module);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->changed);
  }
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["us_per_instruction"] = benchmark::Counter(
      static_cast<double>(instructions) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

BENCHMARK(BM_ParseAndVerify)->Arg(5000)->Arg(10000)->Arg(20000)->Arg(40000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Propagate)->Arg(5000)->Arg(10000)->Arg(20000)->Arg(40000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sharc::benchmarks

BENCHMARK_MAIN();
