// rng-bit-generator's generators (hlo/ops/random_bit_algorithms.h): the
// blocks against Random123's known-answer vectors (kat_vectors: zeros, all
// ones, and the digits of pi), and the arrangement of blocks into elements
// and the next state as XLA's expansion (xla/hlo/builder/lib/prng.cc) lays
// them out.
#include "hlo/ops/random_bit_algorithms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::testing::ElementsAre;

TEST(RandomBitAlgorithmsTest, Philox4x32MatchesRandom123) {
  EXPECT_THAT(Philox4x32({0, 0, 0, 0}, {0, 0}),
              ElementsAre(0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
  EXPECT_THAT(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
              ElementsAre(0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
  EXPECT_THAT(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
              ElementsAre(0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));
}

TEST(RandomBitAlgorithmsTest, ThreeFry2x32MatchesRandom123) {
  EXPECT_THAT(ThreeFry2x32({0, 0}, {0, 0}), ElementsAre(0x6b200159u, 0x99ba4efeu));
  EXPECT_THAT(ThreeFry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
              ElementsAre(0x1cb996fcu, 0xbb002be7u));
  EXPECT_THAT(ThreeFry2x32({0x243f6a88, 0x85a308d3}, {0x13198a2e, 0x03707344}),
              ElementsAre(0xc4923a9cu, 0x483df7a0u));
}

// Philox: four 32-bit elements a block, blocks at consecutive counters; a
// 64-bit element joins two words; with a two-word state the key is the
// counter's high word and only the low word comes back.
TEST(RandomBitAlgorithmsTest, PhiloxFillsElementsBlockByBlock) {
  const uint64_t key = 0x0123456789abcdefULL;
  const std::array<uint32_t, 2> k = {0x89abcdef, 0x01234567};
  ASSERT_OK_AND_ASSIGN(GeneratedBits three,
                       GenerateBits(BitAlgorithm::kPhilox, {key, ~uint64_t{0}, 5}, {5}, 32));
  const std::array<uint32_t, 4> first = Philox4x32({0xffffffff, 0xffffffff, 5, 0}, k);
  // The low word carries into the high one.
  const std::array<uint32_t, 4> second = Philox4x32({0, 0, 6, 0}, k);
  EXPECT_THAT(three.bits, ElementsAre(first[0], first[1], first[2], first[3], second[0]));
  EXPECT_THAT(three.state, ElementsAre(key, uint64_t{1}, uint64_t{6}));

  ASSERT_OK_AND_ASSIGN(GeneratedBits two, GenerateBits(BitAlgorithm::kPhilox, {key, 9}, {3}, 64));
  const std::array<uint32_t, 4> a = Philox4x32({9, 0, 0x89abcdef, 0x01234567}, k);
  const std::array<uint32_t, 4> b = Philox4x32({10, 0, 0x89abcdef, 0x01234567}, k);
  EXPECT_THAT(two.bits, ElementsAre(a[0] | uint64_t{a[1]} << 32, a[2] | uint64_t{a[3]} << 32,
                                    b[0] | uint64_t{b[1]} << 32));
  EXPECT_THAT(two.state, ElementsAre(key, uint64_t{11}));

  // Narrow elements keep each word's low bits.
  ASSERT_OK_AND_ASSIGN(GeneratedBits bytes, GenerateBits(BitAlgorithm::kPhilox, {key, 9}, {2}, 8));
  EXPECT_THAT(bytes.bits, ElementsAre(a[0] & 0xff, a[1] & 0xff));
}

// ThreeFry: 32-bit (and narrower) elements halve the shape along its first
// even dim, and element i of it takes word i % 2 of the block at i / 2;
// 64-bit elements are one block each.
TEST(RandomBitAlgorithmsTest, ThreeFryHalvesTheShapeAlongItsFirstEvenDim) {
  const std::array<uint32_t, 2> k = {7, 0};
  auto block = [&](uint64_t counter) { return ThreeFry2x32({static_cast<uint32_t>(counter), 0}, k); };
  // [3,4]: dim 1 halves to 2; element (r, c) is word c % 2 of block 100 + 2r + c / 2.
  ASSERT_OK_AND_ASSIGN(GeneratedBits g, GenerateBits(BitAlgorithm::kThreeFry, {7, 100}, {3, 4}, 32));
  ASSERT_EQ(g.bits.size(), 12u);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(g.bits[static_cast<size_t>(4 * r + c)], block(100 + 2 * r + c / 2)[c % 2]) << r << c;
    }
  }
  EXPECT_THAT(g.state, ElementsAre(uint64_t{7}, uint64_t{106}));
  // [3]: no even dim, so the largest: 2 blocks, the last word unused.
  ASSERT_OK_AND_ASSIGN(GeneratedBits odd, GenerateBits(BitAlgorithm::kThreeFry, {7, 0}, {3}, 32));
  EXPECT_THAT(odd.bits, ElementsAre(block(0)[0], block(0)[1], block(1)[0]));
  EXPECT_THAT(odd.state, ElementsAre(uint64_t{7}, uint64_t{2}));
  // A scalar: word 0 of one block.
  ASSERT_OK_AND_ASSIGN(GeneratedBits scalar, GenerateBits(BitAlgorithm::kThreeFry, {7, 0}, {}, 32));
  EXPECT_THAT(scalar.bits, ElementsAre(block(0)[0]));
  ASSERT_OK_AND_ASSIGN(GeneratedBits wide, GenerateBits(BitAlgorithm::kThreeFry, {7, 0}, {2}, 64));
  EXPECT_THAT(wide.bits, ElementsAre(block(0)[0] | uint64_t{block(0)[1]} << 32,
                                     block(1)[0] | uint64_t{block(1)[1]} << 32));
}

TEST(RandomBitAlgorithmsTest, StatesTheAlgorithmsCannotTakeAreErrors) {
  EXPECT_THAT(GenerateBits(BitAlgorithm::kThreeFry, {1, 2, 3, 4}, {2}, 32).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("three_fry takes a state of 2 words")));
  EXPECT_THAT(GenerateBits(BitAlgorithm::kPhilox, {1}, {2}, 32).status(),
              testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                ::testing::HasSubstr("philox takes a state of 2 or 3 words")));
}

}  // namespace
}  // namespace sharc::hlo
