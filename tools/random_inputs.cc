#include "tools/random_inputs.h"

#include <complex>
#include <vector>

namespace sharc::tools {
namespace {

// SplitMix64: tiny and fully specified, unlike std:: distributions whose
// output differs between standard libraries.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

void Fill(hlo::Literal& literal, SplitMix64& rng) {
  if (literal.is_tuple()) {
    for (hlo::Literal& element : literal.elements()) Fill(element, rng);
    return;
  }
  hlo::PrimitiveType type = literal.shape().type();
  if (type == hlo::PrimitiveType::kToken) return;  // no data to draw
  for (int64_t i = 0; i < literal.num_elements(); ++i) {
    uint64_t bits = rng.Next();
    if (hlo::IsFloatingPoint(type)) {
      literal.SetFromDouble(i, (static_cast<int64_t>(bits % 512) - 256) / 256.0);
    } else if (hlo::IsComplex(type)) {
      // Both parts as a float's, from the two halves of the draw.
      const double re = (static_cast<int64_t>(bits % 512) - 256) / 256.0;
      const double im = (static_cast<int64_t>((bits >> 32) % 512) - 256) / 256.0;
      if (type == hlo::PrimitiveType::kC64) {
        literal.data<std::complex<float>>()[i] = std::complex<float>(re, im);
      } else {
        literal.data<std::complex<double>>()[i] = std::complex<double>(re, im);
      }
    } else if (hlo::IsSignedInteger(type)) {
      literal.SetFromInt64(i, static_cast<int64_t>(bits % 16) - 8);
    } else if (hlo::IsUnsignedInteger(type)) {
      literal.SetFromInt64(i, static_cast<int64_t>(bits % 16));
    } else {
      literal.SetFromInt64(i, static_cast<int64_t>(bits & 1));
    }
  }
}

}  // namespace

hlo::Literal MakeRandomLiteral(const hlo::Shape& shape, uint64_t seed, uint64_t stream) {
  hlo::Literal literal(shape);
  SplitMix64 rng(seed * 0x100000001b3ULL + stream * 0x9e3779b97f4a7c15ULL + 1);
  Fill(literal, rng);
  return literal;
}

}  // namespace sharc::tools
