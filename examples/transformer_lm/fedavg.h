// Local SGD / FedAvg of the transformer LM with the MapReduce building
// blocks: the server broadcasts the model to the groups placed at
// "clients", every group runs `local_steps` SGD steps on its own batches
// (map_fn), and the server takes the mean of the groups' models
// (reduce_mean). One call of the round function is one round.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/transformer_lm/corpus.h"
#include "examples/transformer_lm/model.h"
#include "frontend/frontend.h"
#include "spmd/mapreduce_lowering.h"
#include "driver/compiled_program.h"

namespace sharc::examples::lm {

struct FedAvgConfig {
  ModelConfig model;
  CorpusConfig corpus;  // corpus.groups is the partition size n
  double learning_rate = 0.5;
  int64_t devices = 1;  // the mesh: one axis "clients" of this many devices
  spmd::MapReduceMode mode = spmd::MapReduceMode::kAnnotated;
  driver::Backend backend = driver::Backend::kDefault;
  // The round's data arrives split over the devices by group (P(clients)),
  // as it would when every group's data lives with its device; false gives
  // every device all of it.
  bool shard_data = true;
};

// Sets the model, its corpus (same vocabulary, sequences of context + 1)
// and its SGD learning rate to a named size: "small", the 0.44M-parameter
// model (vocabulary 256, context 64, width 128, 4 heads, MLP 512, 2
// layers; bm_training_step's "small"; learning rate 2.0), or "tiny"
// (vocabulary 16, context 8, width 16: 4,736 parameters, ModelConfig's and
// CorpusConfig's defaults; 0.5). Anything else is an error naming the sizes.
absl::Status SetModelSize(std::string_view size, FedAvgConfig& config);

// The round as a traced function of [params, data] returning
// [new params, the groups' mean local training loss].
frontend::Tree Round(const FedAvgConfig& config, const frontend::Tree& args);

// What one compiled round costs, per device.
struct RoundFigures {
  std::string mode;
  int64_t groups = 0, devices = 0;
  double seconds = 0;               // median wall time of a round
  double flops = 0;                 // from the cost report
  int64_t peak_memory_bytes = 0;    // from the cost report's liveness analysis
  int64_t measured_peak_bytes = 0;  // the runtime's largest per-device peak in a run
  int64_t communication_bytes = 0;  // sent per device per round
  int64_t collectives = 0;          // collectives per round
  double compile_seconds = 0;
};

class FedAvgTrainer {
 public:
  static absl::StatusOr<std::unique_ptr<FedAvgTrainer>> Create(const FedAvgConfig& config);

  // Runs round `round` from the current model; returns the groups' mean
  // local training loss.
  absl::StatusOr<double> RunRound(int64_t round);
  // Times `iterations` rounds on round 0's data from the current model
  // (without updating it) and fills the report's figures.
  absl::StatusOr<RoundFigures> Measure(int64_t iterations);
  // Wall time of each of `iterations` rounds on round 0's data from the
  // current model (without updating it), compilation excluded.
  absl::StatusOr<std::vector<double>> TimeRounds(int64_t iterations);
  // The round's traced program (blocks visible), for printing.
  absl::StatusOr<std::string> TracedText() const;

  const frontend::HostTree& params() const { return params_; }

 private:
  FedAvgTrainer(const FedAvgConfig& config, frontend::Jitted jitted);
  frontend::HostTree FirstRoundArgs() const;

  FedAvgConfig config_;
  frontend::Jitted round_;
  frontend::HostTree params_;
  double compile_seconds_ = 0;
};

}  // namespace sharc::examples::lm
