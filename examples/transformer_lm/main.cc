// The papers' experiment, short version: a decoder-only transformer LM
// trained by FedAvg (local SGD) over groups that each hold text from their
// own source, written with the MapReduce blocks. Trains for a few rounds on
// the in-process device mesh (the loss per round must go down), then
// compiles the same round three ways -- annotated (DrJAX's internal
// sharding constraints), ns (no constraints) and loop (a loop over the
// groups) -- and prints what a round costs per device in each.
//
//   fedavg_lm [--rounds R] [--groups N] [--devices D] [--size small|tiny]
//             [--learning-rate X]
//             [--backend halide|interpreter] [--modes annotated,ns,loop]
//             [--replicated-data] [--print-program]
//
// --size small (the default) is the 0.44M-parameter model of the training-
// step benchmark (vocabulary 256, context 64, width 128, 4 heads, MLP 512,
// 2 layers; bm_training_step's "small"), large enough that the per-device
// time, memory and traffic columns measure the model rather than the
// runtime's fixed costs; --size tiny (vocabulary 16, width 16) runs in
// seconds.
//
// --replicated-data trains (and compares) with every device given all the
// round's data instead of its groups' part.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "examples/transformer_lm/fedavg.h"
#include "tools/flags.h"

namespace lm = sharc::examples::lm;
namespace tools = sharc::tools;
namespace driver = sharc::driver;

namespace {

constexpr tools::FlagSpec kFlags[] = {
    {"rounds", tools::FlagKind::kValue},       {"groups", tools::FlagKind::kValue},
    {"devices", tools::FlagKind::kValue},      {"backend", tools::FlagKind::kValue},
    {"modes", tools::FlagKind::kValue},        {"iterations", tools::FlagKind::kValue},
    {"replicated-data", tools::FlagKind::kBool}, {"print-program", tools::FlagKind::kBool},
    {"size", tools::FlagKind::kValue},         {"learning-rate", tools::FlagKind::kValue},
};

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "fedavg_lm: %s\n", std::string(status.message()).c_str());
  return 1;
}

std::string Kilobytes(int64_t bytes) { return absl::StrFormat("%.1f", bytes / 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  absl::StatusOr<tools::ParsedArgs> parsed = tools::ParseFlags(args, kFlags);
  if (!parsed.ok()) return Fail(parsed.status());
  auto int_flag = [&](const char* name, int64_t fallback, int64_t max) -> absl::StatusOr<int64_t> {
    std::optional<std::string> value = parsed->Get(name);
    if (!value) return fallback;
    return tools::ParseIntFlag(name, *value, 1, max);
  };
  absl::StatusOr<int64_t> rounds = int_flag("rounds", 10, 10000);
  absl::StatusOr<int64_t> groups = int_flag("groups", 4, 64);
  if (!rounds.ok()) return Fail(rounds.status());
  if (!groups.ok()) return Fail(groups.status());
  absl::StatusOr<int64_t> devices = int_flag("devices", std::min<int64_t>(*groups, 4), 64);
  absl::StatusOr<int64_t> iterations = int_flag("iterations", 3, 1000);
  if (!devices.ok()) return Fail(devices.status());
  if (!iterations.ok()) return Fail(iterations.status());
  absl::StatusOr<driver::Backend> backend = driver::ParseBackend(parsed->Get("backend").value_or(""));
  if (!backend.ok()) return Fail(backend.status());
  std::vector<sharc::spmd::MapReduceMode> modes;
  for (absl::string_view name :
       absl::StrSplit(parsed->Get("modes").value_or("annotated,ns,loop"), ',')) {
    absl::StatusOr<sharc::spmd::MapReduceMode> mode =
        sharc::spmd::ParseMapReduceMode(std::string(name));
    if (!mode.ok()) return Fail(mode.status());
    modes.push_back(*mode);
  }

  lm::FedAvgConfig config;
  config.corpus.groups = *groups;
  config.devices = *devices;
  config.backend = *backend;
  config.shard_data = !parsed->Has("replicated-data");
  if (absl::Status st = lm::SetModelSize(parsed->Get("size").value_or("small"), config); !st.ok()) {
    return Fail(st);
  }
  if (std::optional<std::string> rate = parsed->Get("learning-rate")) {
    double value = 0;
    if (!absl::SimpleAtod(*rate, &value) || !(value > 0) || !std::isfinite(value)) {
      return Fail(absl::InvalidArgumentError("--learning-rate takes a positive number, not '" +
                                             *rate + "'"));
    }
    config.learning_rate = value;
  }

  absl::StatusOr<std::unique_ptr<lm::FedAvgTrainer>> trainer = lm::FedAvgTrainer::Create(config);
  if (!trainer.ok()) return Fail(trainer.status());
  std::printf("FedAvg of a %lld-parameter, %lld-layer transformer LM: %lld groups on %lld devices, "
              "%lld local SGD steps of batch %lld per round\n",
              static_cast<long long>(lm::CountParams((*trainer)->params())),
              static_cast<long long>(config.model.layers), static_cast<long long>(*groups),
              static_cast<long long>(*devices), static_cast<long long>(config.corpus.local_steps),
              static_cast<long long>(config.corpus.batch));
  if (parsed->Has("print-program")) {
    absl::StatusOr<std::string> text = (*trainer)->TracedText();
    if (!text.ok()) return Fail(text.status());
    std::printf("%s\n", text->c_str());
  }
  double first = 0, last = 0;
  for (int64_t round = 0; round < *rounds; ++round) {
    absl::StatusOr<double> loss = (*trainer)->RunRound(round);
    if (!loss.ok()) return Fail(loss.status());
    std::printf("round %2lld: mean local loss %.4f\n", static_cast<long long>(round), *loss);
    std::fflush(stdout);
    if (round == 0) first = *loss;
    last = *loss;
  }
  std::printf("loss %.4f -> %.4f (the sources' entropy floor is %.4f nats/token; uniform guessing "
              "%.4f)\n",
              first, last, lm::EntropyFloor(config.corpus), std::log(double(config.model.vocab)));

  std::printf("\none round, per device (%lld groups, %lld devices):\n",
              static_cast<long long>(*groups), static_cast<long long>(*devices));
  std::printf("%-10s %-11s %9s %9s %16s %15s %9s %12s %10s\n", "mode", "data", "ms/round",
              "MFLOP", "peak KiB (plan)", "peak KiB (run)", "sent KiB", "collectives",
              "compile s");
  // The round's data either arrives split by group (P(clients)), or whole on
  // every device; the second shows what the constraints do on their own.
  std::vector<bool> placements = {true, false};
  if (parsed->Has("replicated-data")) placements = {false};
  for (sharc::spmd::MapReduceMode mode : modes) {
    for (bool shard_data : placements) {
      lm::FedAvgConfig variant = config;
      variant.mode = mode;
      variant.shard_data = shard_data;
      absl::StatusOr<std::unique_ptr<lm::FedAvgTrainer>> t = lm::FedAvgTrainer::Create(variant);
      if (!t.ok()) return Fail(t.status());
      absl::StatusOr<lm::RoundFigures> f = (*t)->Measure(*iterations);
      if (!f.ok()) return Fail(f.status());
      std::printf("%-10s %-11s %9.2f %9.2f %16s %15s %9s %12lld %10.1f\n", f->mode.c_str(),
                  shard_data ? "split" : "replicated", f->seconds * 1e3, f->flops / 1e6,
                  Kilobytes(f->peak_memory_bytes).c_str(), Kilobytes(f->measured_peak_bytes).c_str(),
                  Kilobytes(f->communication_bytes).c_str(), static_cast<long long>(f->collectives),
                  f->compile_seconds);
      std::fflush(stdout);
    }
  }
  if (*rounds > 1 && !(last < first)) {
    std::fprintf(stderr, "fedavg_lm: the loss did not go down (%.4f -> %.4f)\n", first, last);
    return 1;
  }
  return 0;
}
