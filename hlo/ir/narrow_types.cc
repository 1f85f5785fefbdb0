#include "hlo/ir/narrow_types.h"

#include <cmath>
#include <limits>

namespace sharc::hlo {
namespace {

enum class Specials {
  kIeee,  // infinities and NaNs at the top exponent
  kFn,    // no infinities; NaN is the all-ones pattern
  kFnuz,  // no infinities, no negative zero; NaN is 0x80
  kE8M0,  // unsigned exponents only; NaN is 0xff
  kNone,  // f4e2m1fn: every pattern is a finite number
};

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
  bool has_sign = true;
};

Format FormatOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF8E5M2: return {5, 2, 15, Specials::kIeee};
    case PrimitiveType::kF8E4M3: return {4, 3, 7, Specials::kIeee};
    case PrimitiveType::kF8E3M4: return {3, 4, 3, Specials::kIeee};
    case PrimitiveType::kF8E4M3FN: return {4, 3, 7, Specials::kFn};
    case PrimitiveType::kF8E4M3FNUZ: return {4, 3, 8, Specials::kFnuz};
    case PrimitiveType::kF8E5M2FNUZ: return {5, 2, 16, Specials::kFnuz};
    case PrimitiveType::kF8E4M3B11FNUZ: return {4, 3, 11, Specials::kFnuz};
    case PrimitiveType::kF8E8M0FNU: return {8, 0, 127, Specials::kE8M0, false};
    default: return {2, 1, 1, Specials::kNone};  // kF4E2M1FN
  }
}

int SubByteBits(PrimitiveType type) {
  return type == PrimitiveType::kS2 || type == PrimitiveType::kU2 ? 2 : 4;
}

uint8_t NanPattern(const Format& f) {
  switch (f.specials) {
    case Specials::kIeee:
      return static_cast<uint8_t>((((1 << f.exponent_bits) - 1) << f.mantissa_bits) |
                                  (1 << (f.mantissa_bits - 1)));
    case Specials::kFn: return static_cast<uint8_t>((1 << (f.exponent_bits + f.mantissa_bits)) - 1);
    case Specials::kFnuz: return 0x80;
    case Specials::kE8M0: return 0xff;
    case Specials::kNone: return 0;  // no NaN: +0
  }
  return 0;
}

// The largest pattern (sign clear) that holds a finite value.
int MaxFinitePattern(const Format& f) {
  const int top = (1 << (f.exponent_bits + f.mantissa_bits)) - 1;
  switch (f.specials) {
    case Specials::kIeee: return top - (1 << f.mantissa_bits);  // below the top exponent
    case Specials::kFn: return top - 1;                           // below NaN
    case Specials::kE8M0: return top - 1;                         // 0xfe
    default: return top;
  }
}

double Magnitude(const Format& f, int pattern) {
  if (f.specials == Specials::kE8M0) return std::ldexp(1.0, pattern - f.bias);
  const int exponent = pattern >> f.mantissa_bits;
  const int mantissa = pattern & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
  return std::ldexp((1 << f.mantissa_bits) + mantissa, exponent - f.bias - f.mantissa_bits);
}

}  // namespace

bool IsNarrowFloat(PrimitiveType type) {
  return type >= PrimitiveType::kF4E2M1FN && type <= PrimitiveType::kF8E8M0FNU;
}

bool IsSubByteInteger(PrimitiveType type) {
  return type == PrimitiveType::kS2 || type == PrimitiveType::kS4 || type == PrimitiveType::kU2 ||
         type == PrimitiveType::kU4;
}

double NarrowFloatToDouble(PrimitiveType type, uint8_t bits) {
  const Format f = FormatOf(type);
  const int magnitude_bits = f.exponent_bits + f.mantissa_bits;
  bits &= static_cast<uint8_t>((1 << (magnitude_bits + (f.has_sign ? 1 : 0))) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.specials == Specials::kFnuz && bits == 0x80) return nan;
  if (f.specials == Specials::kE8M0 && bits == 0xff) return nan;
  const bool negative = f.has_sign && ((bits >> magnitude_bits) & 1);
  const int pattern = bits & ((1 << magnitude_bits) - 1);
  const int exponent = pattern >> f.mantissa_bits;
  const int mantissa = pattern & ((1 << f.mantissa_bits) - 1);
  const int top_exponent = (1 << f.exponent_bits) - 1;
  if (f.specials == Specials::kIeee && exponent == top_exponent) {
    return mantissa != 0 ? nan : negative ? -INFINITY : INFINITY;
  }
  if (f.specials == Specials::kFn && pattern == (1 << magnitude_bits) - 1) return nan;
  const double v = Magnitude(f, pattern);
  return negative ? -v : v;
}

uint8_t NarrowFloatFromDouble(PrimitiveType type, double value) {
  const Format f = FormatOf(type);
  const int magnitude_bits = f.exponent_bits + f.mantissa_bits;
  if (std::isnan(value)) return NanPattern(f);
  const bool negative = std::signbit(value);
  if (negative && !f.has_sign) return value == 0 ? 0 : NanPattern(f);
  const double a = std::fabs(value);
  const int max_pattern = MaxFinitePattern(f);
  const double max = Magnitude(f, max_pattern);
  int pattern;
  // Past the largest finite value by half its spacing (ties to even), the
  // value overflows: to infinity where the type has one.
  const double half_spacing = (max - Magnitude(f, max_pattern - 1)) / 2;
  if (a > max + half_spacing || (a == max + half_spacing && (max_pattern & 1))) {
    if (f.specials == Specials::kIeee) {
      pattern = ((1 << f.exponent_bits) - 1) << f.mantissa_bits;
    } else if (f.specials == Specials::kNone) {
      pattern = max_pattern;  // no infinity and no NaN: the largest value
    } else {
      return NanPattern(f);
    }
  } else {
    // Patterns order their values: find the last one at or below `a`.
    int lo = 0, hi = max_pattern;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (Magnitude(f, mid) <= a) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    pattern = lo;
    if (lo < max_pattern) {
      const double below = Magnitude(f, lo), above = Magnitude(f, lo + 1);
      if (a - below > above - a || (a - below == above - a && (lo & 1))) pattern = lo + 1;
    }
  }
  if (!negative || !f.has_sign) return static_cast<uint8_t>(pattern);
  // No negative zero in the fnuz types (0x80 is their NaN).
  if (pattern == 0 && f.specials == Specials::kFnuz) return 0;
  return static_cast<uint8_t>(pattern | (1 << magnitude_bits));
}

int NarrowFloatSignificandBits(PrimitiveType type) { return FormatOf(type).mantissa_bits + 1; }

int64_t SubByteToInt64(PrimitiveType type, uint8_t byte) {
  const int bits = SubByteBits(type);
  const int64_t low = byte & ((1 << bits) - 1);
  if (IsUnsignedInteger(type)) return low;
  return low >= (int64_t{1} << (bits - 1)) ? low - (int64_t{1} << bits) : low;
}

uint8_t SubByteFromInt64(PrimitiveType type, int64_t value) {
  const int bits = SubByteBits(type);
  const uint8_t low = static_cast<uint8_t>(static_cast<uint64_t>(value) & ((1u << bits) - 1));
  return static_cast<uint8_t>(SubByteToInt64(type, low));
}

PrimitiveType ComputeTypeOfNarrow(PrimitiveType type) {
  if (IsNarrowFloat(type)) return PrimitiveType::kF32;
  return IsUnsignedInteger(type) ? PrimitiveType::kU32 : PrimitiveType::kS32;
}

}  // namespace sharc::hlo
