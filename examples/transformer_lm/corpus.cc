#include "examples/transformer_lm/corpus.h"

#include <cmath>
#include <random>
#include <vector>

namespace sharc::examples::lm {
namespace {

// Group g's source: from token c the next token is (c * multiplier + shift)
// mod vocab with probability kFavourite, c + step with kSecond, and
// uniformly random otherwise.
constexpr double kFavourite = 0.6, kSecond = 0.3;

struct Source {
  int64_t multiplier, shift, step;
};

Source GroupSource(int64_t group, int64_t vocab) {
  // Odd multipliers are invertible mod a power of two, so every token
  // keeps a distinct favourite successor.
  return Source{2 * (group % 4) + 1, (3 * group + 1) % vocab, group % 3 + 1};
}

std::vector<double> NextTokenProbabilities(const Source& s, int64_t vocab, int64_t current) {
  std::vector<double> p(static_cast<size_t>(vocab), (1.0 - kFavourite - kSecond) / vocab);
  p[static_cast<size_t>((current * s.multiplier + s.shift) % vocab)] += kFavourite;
  p[static_cast<size_t>((current + s.step) % vocab)] += kSecond;
  return p;
}

}  // namespace

hlo::Literal RoundData(const CorpusConfig& c, int64_t round) {
  hlo::Literal data(hlo::Shape(hlo::PrimitiveType::kS32,
                               {c.groups, c.local_steps, c.batch, c.sequence}));
  int32_t* out = data.data<int32_t>().data();
  for (int64_t g = 0; g < c.groups; ++g) {
    const Source source = GroupSource(g, c.vocab);
    std::mt19937_64 rng(c.seed ^ (static_cast<uint64_t>(round) * 0x9E3779B97F4A7C15ULL) ^
                        (static_cast<uint64_t>(g) << 32));
    std::uniform_int_distribution<int64_t> first(0, c.vocab - 1);
    for (int64_t sequence = 0; sequence < c.local_steps * c.batch; ++sequence) {
      int64_t token = first(rng);
      for (int64_t i = 0; i < c.sequence; ++i) {
        *out++ = static_cast<int32_t>(token);
        std::vector<double> p = NextTokenProbabilities(source, c.vocab, token);
        token = std::discrete_distribution<int64_t>(p.begin(), p.end())(rng);
      }
    }
  }
  return data;
}

double EntropyFloor(const CorpusConfig& c) {
  // Every source's stationary distribution is uniform (each token has
  // exactly one favourite predecessor and one "step" predecessor), so the
  // entropy rate is the mean of the rows' entropies.
  double total = 0;
  for (int64_t g = 0; g < c.groups; ++g) {
    const Source source = GroupSource(g, c.vocab);
    for (int64_t current = 0; current < c.vocab; ++current) {
      for (double p : NextTokenProbabilities(source, c.vocab, current)) total -= p * std::log(p);
    }
  }
  return total / static_cast<double>(c.groups * c.vocab);
}

}  // namespace sharc::examples::lm
