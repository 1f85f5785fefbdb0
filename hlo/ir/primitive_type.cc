#include "hlo/ir/primitive_type.h"

#include <array>
#include <cmath>

namespace sharc::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int64_t bytes;
};

// Bytes are the storage a value would take (sub-byte types one byte each),
// which only sizes and cost estimates read.
constexpr std::array<TypeInfo, 29> kTypes = {{
    {PrimitiveType::kPred, "pred", 1},
    {PrimitiveType::kS8, "s8", 1},
    {PrimitiveType::kS16, "s16", 2},
    {PrimitiveType::kS32, "s32", 4},
    {PrimitiveType::kS64, "s64", 8},
    {PrimitiveType::kU8, "u8", 1},
    {PrimitiveType::kU16, "u16", 2},
    {PrimitiveType::kU32, "u32", 4},
    {PrimitiveType::kU64, "u64", 8},
    {PrimitiveType::kF16, "f16", 2},
    {PrimitiveType::kBF16, "bf16", 2},
    {PrimitiveType::kF32, "f32", 4},
    {PrimitiveType::kF64, "f64", 8},
    {PrimitiveType::kS2, "s2", 1},
    {PrimitiveType::kS4, "s4", 1},
    {PrimitiveType::kU2, "u2", 1},
    {PrimitiveType::kU4, "u4", 1},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 1},
    {PrimitiveType::kF8E3M4, "f8e3m4", 1},
    {PrimitiveType::kF8E4M3, "f8e4m3", 1},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 1},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 1},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 1},
    {PrimitiveType::kF8E5M2, "f8e5m2", 1},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 1},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 1},
    {PrimitiveType::kC64, "c64", 8},
    {PrimitiveType::kC128, "c128", 16},
    {PrimitiveType::kToken, "token", 0},
}};

constexpr std::array<PrimitiveType, 13> kAllTypes = {
    PrimitiveType::kPred, PrimitiveType::kS8,  PrimitiveType::kS16,
    PrimitiveType::kS32,  PrimitiveType::kS64, PrimitiveType::kU8,
    PrimitiveType::kU16,  PrimitiveType::kU32, PrimitiveType::kU64,
    PrimitiveType::kF16,  PrimitiveType::kBF16, PrimitiveType::kF32,
    PrimitiveType::kF64};

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

const std::string& PrimitiveTypeName(PrimitiveType type) {
  static const auto* names = [] {
    auto* m = new std::array<std::string, kNumPrimitiveTypes>();
    (*m)[0] = "invalid";
    for (const TypeInfo& info : kTypes) (*m)[static_cast<size_t>(info.type)] = std::string(info.name);
    return m;
  }();
  return (*names)[static_cast<size_t>(type)];
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

int64_t ByteWidth(PrimitiveType type) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == type) return info.bytes;
  }
  return 0;
}

bool IsFloatingPoint(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 ||
         type == PrimitiveType::kF32 || type == PrimitiveType::kF64 ||
         (type >= PrimitiveType::kF4E2M1FN && type <= PrimitiveType::kF8E8M0FNU);
}
bool IsComplex(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}
bool IsRunnableType(PrimitiveType type) {
  return type != PrimitiveType::kInvalid && type <= PrimitiveType::kF64;
}
bool IsSignedInteger(PrimitiveType type) {
  return type == PrimitiveType::kS8 || type == PrimitiveType::kS16 ||
         type == PrimitiveType::kS32 || type == PrimitiveType::kS64 ||
         type == PrimitiveType::kS2 || type == PrimitiveType::kS4;
}
bool IsUnsignedInteger(PrimitiveType type) {
  return type == PrimitiveType::kU8 || type == PrimitiveType::kU16 ||
         type == PrimitiveType::kU32 || type == PrimitiveType::kU64 ||
         type == PrimitiveType::kU2 || type == PrimitiveType::kU4;
}

const PrimitiveType* AllArrayTypes(int* count) {
  *count = static_cast<int>(kAllTypes.size());
  return kAllTypes.data();
}

// Round-to-nearest-even conversion f32 -> f16, with overflow to inf,
// subnormals, and NaN kept quiet.
Half::Half(float f) {
  uint32_t x = FloatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    bits = static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // result is subnormal or zero
    // Scale so that the subnormal quantum (2^-24) maps to 1, then round.
    float scaled = BitsToFloat(abs) * 16777216.0f;  // * 2^24
    float r = std::nearbyint(scaled);                 // ties-to-even mode
    bits = static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
    return;
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xfffu + mant_odd;  // round to nearest even on the dropped 13 bits
  abs -= (127u - 15u) << 23;
  bits = static_cast<uint16_t>(sign | (abs >> 13));
}

Half::operator float() const {
  uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1fu;
  uint32_t mant = bits & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 0x1f) {
    return BitsToFloat(sign | 0x7f800000u | (mant << 13));
  }
  return BitsToFloat(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

BFloat16::BFloat16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) {  // nan: keep it quiet
    bits = static_cast<uint16_t>((x >> 16) | 0x40u);
    return;
  }
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  bits = static_cast<uint16_t>(x >> 16);
}

}  // namespace sharc::hlo
