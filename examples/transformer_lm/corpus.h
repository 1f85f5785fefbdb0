// The experiment's partitioned corpus, made by the program itself: every
// group draws its text from its own source (a Markov chain over the
// vocabulary with group-specific transitions), as the papers partition
// CCNews by domain, so a group's data is unlike the others' and the loss
// has a floor (the chains' entropy) it can approach.
#pragma once

#include <cstdint>

#include "hlo/ir/literal.h"

namespace sharc::examples::lm {

struct CorpusConfig {
  int64_t vocab = 16;
  int64_t groups = 4;
  int64_t local_steps = 4;   // batches per group per round
  int64_t batch = 8;         // sequences per batch
  int64_t sequence = 9;      // tokens per sequence (the model's context + 1)
  uint64_t seed = 2026;
};

// One round's data: s32[groups, local_steps, batch, sequence], group g's
// slice drawn from group g's source. Different rounds get fresh text.
hlo::Literal RoundData(const CorpusConfig& config, int64_t round);

// The cross-entropy floor of the groups' sources (nats per token, averaged
// over groups), which no model can beat.
double EntropyFloor(const CorpusConfig& config);

}  // namespace sharc::examples::lm
