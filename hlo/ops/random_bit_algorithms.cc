#include "hlo/ops/random_bit_algorithms.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace sharc::hlo {
namespace {

uint32_t RotateLeft(uint32_t v, int distance) { return (v << distance) | (v >> (32 - distance)); }

uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }
uint64_t Join(uint32_t low, uint32_t high) { return uint64_t{low} | (uint64_t{high} << 32); }

uint64_t Truncate(uint64_t v, int bit_width) {
  return bit_width >= 64 ? v : v & ((uint64_t{1} << bit_width) - 1);
}

int64_t CountOf(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Threefry over the halved shape (narrow elements) or the whole shape.
GeneratedBits ThreeFryBits(uint64_t key, uint64_t counter, absl::Span<const int64_t> dims,
                           int bit_width) {
  GeneratedBits out;
  const std::array<uint32_t, 2> k = {Low(key), High(key)};
  const int64_t n = CountOf(dims);
  out.bits.resize(static_cast<size_t>(n));
  if (bit_width == 64) {
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t c = counter + static_cast<uint64_t>(i);
      const std::array<uint32_t, 2> x = ThreeFry2x32({Low(c), High(c)}, k);
      out.bits[static_cast<size_t>(i)] = Join(x[0], x[1]);
    }
    out.state = {key, counter + static_cast<uint64_t>(n)};
    return out;
  }
  if (dims.empty()) {  // a scalar: word 0 of one call
    out.bits[0] = Truncate(ThreeFry2x32({Low(counter), High(counter)}, k)[0], bit_width);
    out.state = {key, counter + 1};
    return out;
  }
  // The split dim: the first even one, else the (first) largest.
  size_t split = dims.size();
  for (size_t d = 0; d < dims.size() && split == dims.size(); ++d) {
    if (dims[d] % 2 == 0) split = d;
  }
  if (split == dims.size()) {
    split = 0;
    for (size_t d = 1; d < dims.size(); ++d) {
      if (dims[d] > dims[split]) split = d;
    }
  }
  std::vector<int64_t> half(dims.begin(), dims.end());
  half[split] = (dims[split] + 1) / 2;
  const int64_t calls = CountOf(half);
  // Row-major walk of the output: index (outer, i, inner) around the split
  // dim maps to half position (outer, i / 2, inner), word i % 2.
  int64_t inner = 1;
  for (size_t d = split + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t outer = CountOf(dims.subspan(0, split));
  int64_t e = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < dims[split]; ++i) {
      for (int64_t r = 0; r < inner; ++r, ++e) {
        const int64_t position = (o * half[split] + i / 2) * inner + r;
        const uint64_t c = counter + static_cast<uint64_t>(position);
        const std::array<uint32_t, 2> x = ThreeFry2x32({Low(c), High(c)}, k);
        out.bits[static_cast<size_t>(e)] = Truncate(x[static_cast<size_t>(i % 2)], bit_width);
      }
    }
  }
  out.state = {key, counter + static_cast<uint64_t>(calls)};
  return out;
}

// The 128-bit counter plus `j`, as Philox's four words.
std::array<uint32_t, 4> CounterWords(uint64_t low, uint64_t high, uint64_t j) {
  const uint64_t sum = low + j;
  const uint64_t carried = high + (sum < low ? 1 : 0);
  return {Low(sum), High(sum), Low(carried), High(carried)};
}

GeneratedBits PhiloxBits(uint64_t key, uint64_t low, uint64_t high, bool three_words,
                         absl::Span<const int64_t> dims, int bit_width) {
  GeneratedBits out;
  const std::array<uint32_t, 2> k = {Low(key), High(key)};
  const int64_t n = CountOf(dims);
  out.bits.resize(static_cast<size_t>(n));
  const int64_t per_call = bit_width == 64 ? 2 : 4;
  const int64_t calls = (n + per_call - 1) / per_call;
  for (int64_t j = 0; j < calls; ++j) {
    const std::array<uint32_t, 4> w = Philox4x32(CounterWords(low, high, static_cast<uint64_t>(j)), k);
    for (int64_t s = 0; s < per_call && j * per_call + s < n; ++s) {
      const size_t at = static_cast<size_t>(j * per_call + s);
      out.bits[at] = bit_width == 64 ? Join(w[static_cast<size_t>(2 * s)], w[static_cast<size_t>(2 * s + 1)])
                                     : Truncate(w[static_cast<size_t>(s)], bit_width);
    }
  }
  const std::array<uint32_t, 4> next = CounterWords(low, high, static_cast<uint64_t>(calls));
  out.state = {key, Join(next[0], next[1])};
  if (three_words) out.state.push_back(Join(next[2], next[3]));
  return out;
}

}  // namespace

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key) {
  constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  std::array<uint32_t, 2> x = {counter[0] + ks[0], counter[1] + ks[1]};
  // Five groups of four rounds, each followed by a key injection.
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], kRotations[(group % 2) * 4 + r]);
      x[1] ^= x[0];
    }
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return x;
}

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key) {
  constexpr uint32_t kBumpA = 0x9E3779B9, kBumpB = 0xBB67AE85;
  constexpr uint64_t kMulA = 0xD2511F53, kMulB = 0xCD9E8D57;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = kMulA * counter[0];
    const uint64_t p1 = kMulB * counter[2];
    counter = {High(p1) ^ counter[1] ^ key[0], Low(p1), High(p0) ^ counter[3] ^ key[1], Low(p0)};
    key = {key[0] + kBumpA, key[1] + kBumpB};
  }
  return counter;
}

absl::StatusOr<GeneratedBits> GenerateBits(BitAlgorithm algorithm, absl::Span<const uint64_t> state,
                                           absl::Span<const int64_t> dims, int bit_width) {
  if (bit_width != 8 && bit_width != 16 && bit_width != 32 && bit_width != 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("draws elements of 8, 16, 32 or 64 bits, not ", bit_width));
  }
  if (algorithm == BitAlgorithm::kThreeFry) {
    if (state.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "three_fry takes a state of 2 words (key, counter), got ", state.size()));
    }
    return ThreeFryBits(state[0], state[1], dims, bit_width);
  }
  if (state.size() != 2 && state.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        "philox takes a state of 2 or 3 words (key, counter), got ", state.size()));
  }
  const bool three_words = state.size() == 3;
  return PhiloxBits(state[0], state[1], three_words ? state[2] : state[0], three_words, dims,
                    bit_width);
}

}  // namespace sharc::hlo
