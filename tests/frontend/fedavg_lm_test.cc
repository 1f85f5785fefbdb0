// The papers' experiment at test size: the FedAvg transformer LM learns,
// and its per-device costs scale the way the comparison claims -- annotated
// rounds cost each device the same whatever the partition size, while the
// unconstrained program with replicated data and the loop do n groups' work
// on every device.
#include <gtest/gtest.h>

#include "examples/transformer_lm/fedavg.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::examples::lm {
namespace {

FedAvgConfig SmallConfig(int64_t groups, spmd::MapReduceMode mode, bool shard_data) {
  FedAvgConfig config;
  config.corpus.groups = groups;
  config.devices = groups;
  config.mode = mode;
  config.shard_data = shard_data;
  config.backend = driver::Backend::kInterpreter;
  return config;
}

RoundFigures Figures(int64_t groups, spmd::MapReduceMode mode, bool shard_data) {
  auto trainer = FedAvgTrainer::Create(SmallConfig(groups, mode, shard_data));
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return {};
  absl::StatusOr<RoundFigures> figures = (*trainer)->Measure(0);
  EXPECT_TRUE(figures.ok()) << figures.status();
  return figures.ok() ? *figures : RoundFigures{};
}

TEST(FedAvgLmTest, LossGoesDownOverRounds) {
  ASSERT_OK_AND_ASSIGN(auto trainer,
                       FedAvgTrainer::Create(SmallConfig(2, spmd::MapReduceMode::kAnnotated, true)));
  ASSERT_OK_AND_ASSIGN(double first, trainer->RunRound(0));
  double last = first;
  for (int64_t round = 1; round < 4; ++round) {
    ASSERT_OK_AND_ASSIGN(last, trainer->RunRound(round));
  }
  EXPECT_LT(last, first - 0.2);
}

TEST(FedAvgLmTest, AllThreeLoweringsComputeTheSameRound) {
  std::vector<double> losses;
  for (auto mode : {spmd::MapReduceMode::kAnnotated, spmd::MapReduceMode::kNoSharding,
                    spmd::MapReduceMode::kLoop}) {
    ASSERT_OK_AND_ASSIGN(auto trainer, FedAvgTrainer::Create(SmallConfig(2, mode, false)));
    ASSERT_OK_AND_ASSIGN(double loss, trainer->RunRound(0));
    ASSERT_OK_AND_ASSIGN(loss, trainer->RunRound(1));
    losses.push_back(loss);
  }
  EXPECT_NEAR(losses[1], losses[0], 1e-4);
  EXPECT_NEAR(losses[2], losses[0], 1e-4);
}

TEST(FedAvgLmTest, AnnotatedWorkPerDeviceIsFlatAndTheOthersGrowWithTheGroups) {
  const RoundFigures annotated1 = Figures(1, spmd::MapReduceMode::kAnnotated, false);
  const RoundFigures annotated4 = Figures(4, spmd::MapReduceMode::kAnnotated, false);
  const RoundFigures ns4 = Figures(4, spmd::MapReduceMode::kNoSharding, false);
  const RoundFigures loop4 = Figures(4, spmd::MapReduceMode::kLoop, false);
  ASSERT_GT(annotated1.flops, 0);
  // Annotated: one group's work per device (plus the mean's adds).
  EXPECT_NEAR(annotated4.flops / annotated1.flops, 1.0, 0.05);
  EXPECT_GT(annotated4.communication_bytes, 0);
  // Unconstrained with replicated data, and the loop: all four groups on
  // every device, no communication needed.
  EXPECT_NEAR(ns4.flops / annotated1.flops, 4.0, 0.2);
  EXPECT_NEAR(loop4.flops / annotated1.flops, 4.0, 0.2);
  EXPECT_GT(ns4.peak_memory_bytes, 2 * annotated4.peak_memory_bytes);
}

TEST(FedAvgLmTest, UnconstrainedProgramWithSplitDataIsShardedByPropagation) {
  // sharc's propagation carries the data's P(clients) through the vmapped
  // map, so with split data the program without constraints is partitioned
  // like the annotated one (docs/weak_scaling.md explains the difference
  // from the papers).
  const RoundFigures annotated = Figures(4, spmd::MapReduceMode::kAnnotated, true);
  const RoundFigures ns = Figures(4, spmd::MapReduceMode::kNoSharding, true);
  EXPECT_NEAR(ns.flops / annotated.flops, 1.0, 0.05);
}

}  // namespace
}  // namespace sharc::examples::lm
