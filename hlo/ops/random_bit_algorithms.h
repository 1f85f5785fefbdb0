// The bit generators of rng-bit-generator, as XLA defines them: its CPU and
// GPU compilers expand the op (RngBitGeneratorExpander, with rng_default
// taken as Philox) into the counter-based generators of Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3" (SC 2011): Threefry-2x32
// with 20 rounds and Philox-4x32 with 10, over a u64 state whose element 0
// is the key. How the state holds the counter, which counter each output
// element takes and how words become elements follow XLA's builder library
// (xla/hlo/builder/lib/prng.cc), so that sharc's bits are XLA's:
//
//   three_fry (state u64[2] = {key, counter}):
//     64-bit elements: element i = TF(counter + i) as lo | hi << 32;
//     narrower ones: the shape is halved along its first even dim (else
//     its largest); element i of that dim takes word i % 2 of TF at the
//     halved index (counter + its row-major position), truncated;
//     state' = {key, counter + the count of TF calls}.
//   philox (state u64[3] = {key, counter lo, counter hi}, or u64[2] =
//   {key, counter lo} with the key as the counter's high word):
//     32-bit (and narrower, truncated) elements: 4j + w = word w of
//     Philox(counter + j); 64-bit: 2j + h = words 2h, 2h+1 as lo | hi << 32;
//     state' = {key, counter + calls} (its low word only for u64[2]).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace sharc::hlo {

// One block of each generator (Random123's threefry2x32-20 and
// philox4x32-10).
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter,
                                     std::array<uint32_t, 2> key);
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

enum class BitAlgorithm { kThreeFry, kPhilox };

struct GeneratedBits {
  std::vector<uint64_t> state;  // the next state, as long as the given one
  std::vector<uint64_t> bits;   // row-major, each within `bit_width` bits
};

// Draws an array of `dims` elements of `bit_width` bits (8, 16, 32 or 64)
// from `state`. An error names a state the algorithm cannot take.
absl::StatusOr<GeneratedBits> GenerateBits(BitAlgorithm algorithm,
                                           absl::Span<const uint64_t> state,
                                           absl::Span<const int64_t> dims, int bit_width);

}  // namespace sharc::hlo
