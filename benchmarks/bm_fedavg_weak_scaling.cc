// The papers' weak-scaling comparison on this machine: FedAvg rounds of the
// transformer LM (examples/transformer_lm) with the partition size n = 1, 2,
// 4, 8 and as many devices, compiled three ways (annotated, ns, loop), with
// the round's data arriving split over the devices by group or replicated.
// Time is the wall time of a round; the counters are per device and do not
// depend on the machine's 2 cores: FLOPs, peak memory (planned by the cost
// report, and measured by the runtime), bytes sent, collectives. The model
// is the 0.44M-parameter one of the main job (SHARC_FEDAVG_SIZE=tiny for
// the 4,736-parameter one, which runs in seconds).
//
//   scripts/weak_scaling.sh   (writes docs/weak_scaling.csv and .png)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "examples/transformer_lm/fedavg.h"

namespace lm = sharc::examples::lm;
using sharc::spmd::MapReduceMode;

namespace {

void BM_FedAvgRound(benchmark::State& state, MapReduceMode mode, bool shard_data) {
  lm::FedAvgConfig config;
  const char* size = std::getenv("SHARC_FEDAVG_SIZE");
  if (absl::Status st = lm::SetModelSize(size != nullptr ? size : "small", config); !st.ok()) {
    state.SkipWithError(std::string(st.message()).c_str());
    return;
  }
  config.corpus.groups = state.range(0);
  config.devices = state.range(0);
  config.mode = mode;
  config.shard_data = shard_data;
  absl::StatusOr<std::unique_ptr<lm::FedAvgTrainer>> trainer = lm::FedAvgTrainer::Create(config);
  if (!trainer.ok()) {
    state.SkipWithError(std::string(trainer.status().message()).c_str());
    return;
  }
  absl::StatusOr<lm::RoundFigures> figures = (*trainer)->Measure(0);
  if (!figures.ok()) {
    state.SkipWithError(std::string(figures.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<double>> seconds = (*trainer)->TimeRounds(1);
    if (!seconds.ok()) {
      state.SkipWithError(std::string(seconds.status().message()).c_str());
      return;
    }
    state.SetIterationTime(seconds->front());
  }
  state.counters["groups"] = static_cast<double>(config.corpus.groups);
  state.counters["devices"] = static_cast<double>(config.devices);
  state.counters["flops_per_device"] = figures->flops;
  state.counters["peak_bytes_per_device"] = static_cast<double>(figures->peak_memory_bytes);
  state.counters["measured_peak_bytes_per_device"] =
      static_cast<double>(figures->measured_peak_bytes);
  state.counters["bytes_sent_per_device"] = static_cast<double>(figures->communication_bytes);
  state.counters["collectives"] = static_cast<double>(figures->collectives);
  state.counters["compile_seconds"] = figures->compile_seconds;
  state.counters["params"] = static_cast<double>(lm::CountParams((*trainer)->params()));
}

void WeakScaling(benchmark::internal::Benchmark* b) {
  for (int64_t n : {1, 2, 4, 8}) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
}

BENCHMARK_CAPTURE(BM_FedAvgRound, annotated, MapReduceMode::kAnnotated, true)->Apply(WeakScaling);
BENCHMARK_CAPTURE(BM_FedAvgRound, ns, MapReduceMode::kNoSharding, true)->Apply(WeakScaling);
BENCHMARK_CAPTURE(BM_FedAvgRound, loop, MapReduceMode::kLoop, true)->Apply(WeakScaling);
BENCHMARK_CAPTURE(BM_FedAvgRound, annotated_replicated_data, MapReduceMode::kAnnotated, false)
    ->Apply(WeakScaling);
BENCHMARK_CAPTURE(BM_FedAvgRound, ns_replicated_data, MapReduceMode::kNoSharding, false)
    ->Apply(WeakScaling);
BENCHMARK_CAPTURE(BM_FedAvgRound, loop_replicated_data, MapReduceMode::kLoop, false)
    ->Apply(WeakScaling);

}  // namespace

BENCHMARK_MAIN();
