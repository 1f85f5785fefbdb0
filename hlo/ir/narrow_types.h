// XLA's narrow element types: the 8- and 4-bit floats (f8e4m3fn, f8e5m2, ...,
// f4e2m1fn) and the sub-byte integers (s2, s4, u2, u4). Each element is
// stored in one byte: a float's bit pattern in its low bits, an integer
// sign- or zero-extended. Nothing computes in these types directly: convert
// and data movement handle their bytes (hlo/ops/narrow_type_semantics.h) and
// arithmetic runs in f32 / s32 / u32 between converts
// (hlo/passes/upcast_narrow_types.h), as XLA's CPU backend upcasts them.
//
// The floats' encodings follow ml_dtypes (and so JAX and XLA):
//   e5m2, e4m3, e3m4        IEEE-like: infinities and NaNs at the top exponent
//   e4m3fn                  no infinities; NaN is S.1111.111 (max 448)
//   e4m3fnuz, e5m2fnuz,     no infinities, no negative zero; NaN is 0x80
//   e4m3b11fnuz             (bias 8, 16 and 11)
//   e8m0fnu                 unsigned powers of two 2^-127..2^127; NaN 0xff
//   f4e2m1fn                4 bits, no infinities or NaNs (max 6)
// Rounding is to nearest, ties to even; a value beyond the largest finite
// one rounds to infinity, or to NaN in types without infinities.
#pragma once

#include <cstdint>

#include "hlo/ir/primitive_type.h"

namespace sharc::hlo {

bool IsNarrowFloat(PrimitiveType type);
bool IsSubByteInteger(PrimitiveType type);
inline bool IsNarrowType(PrimitiveType type) {
  return IsNarrowFloat(type) || IsSubByteInteger(type);
}

// The value of a narrow float's bit pattern, and the pattern nearest `value`.
double NarrowFloatToDouble(PrimitiveType type, uint8_t bits);
uint8_t NarrowFloatFromDouble(PrimitiveType type, double value);

// A narrow float's significant bits (its mantissa bits and the implicit one).
int NarrowFloatSignificandBits(PrimitiveType type);

// A sub-byte integer's stored byte as a value, and `value` wrapped to the
// type's bits (two's complement for s2/s4), as a stored byte.
int64_t SubByteToInt64(PrimitiveType type, uint8_t byte);
uint8_t SubByteFromInt64(PrimitiveType type, int64_t value);

// The type a narrow type computes in: f32 for the floats, s32 / u32 for the
// integers.
PrimitiveType ComputeTypeOfNarrow(PrimitiveType type);

}  // namespace sharc::hlo
