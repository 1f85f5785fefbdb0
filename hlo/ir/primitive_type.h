// Element types of the IR and the host C++ types that store them.
// f16 and bf16 are stored as 16-bit patterns and computed in float, rounding
// to nearest-even after every operation, which is what XLA's CPU evaluator does.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sharc::hlo {

enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS8,
  kS16,
  kS32,
  kS64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  // Types DispatchPrimitiveType does not take: XLA's sub-byte integers and
  // 8- and 4-bit floats (a byte per element, hlo/ir/narrow_types.h) and the
  // complex types. They compute only in the ops their semantics files wrap
  // (hlo/ops/narrow_type_semantics.h, complex_semantics.h); CheckRunnableTypes
  // refuses any other op that meets one.
  kS2,
  kS4,
  kU2,
  kU4,
  kF4E2M1FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E4M3B11FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kC64,
  kC128,
  // The ordering token of side effects (`token[]`: after-all, send/recv,
  // infeed/outfeed). It has no value and no dimensions; like the types
  // above it is not runnable (CheckRunnableTypes names the op that keeps
  // one alive).
  kToken,
};

// The number of PrimitiveType values, kInvalid included.
inline constexpr int kNumPrimitiveTypes = static_cast<int>(PrimitiveType::kToken) + 1;

// std::string rather than a view: see the note in opcode.h.
const std::string& PrimitiveTypeName(PrimitiveType type);
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
int64_t ByteWidth(PrimitiveType type);
// Real floating-point types, the narrow ones included.
bool IsFloatingPoint(PrimitiveType type);
bool IsComplex(PrimitiveType type);
// True for the types sharc can hold values of and compute with (those
// DispatchPrimitiveType accepts).
bool IsRunnableType(PrimitiveType type);
bool IsSignedInteger(PrimitiveType type);
bool IsUnsignedInteger(PrimitiveType type);
inline bool IsInteger(PrimitiveType type) {
  return IsSignedInteger(type) || IsUnsignedInteger(type);
}
// Every runnable array type, in enum order (used by tests that sweep all
// dtypes).
const PrimitiveType* AllArrayTypes(int* count);

// IEEE binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f);
  explicit Half(double d) : Half(static_cast<float>(d)) {}
  operator float() const;
};

// bfloat16: the upper half of an f32, rounded to nearest-even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float f);
  explicit BFloat16(double d) : BFloat16(static_cast<float>(d)) {}
  operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

// Maps a PrimitiveType to its storage type.
template <PrimitiveType T> struct NativeTypeOf;
template <> struct NativeTypeOf<PrimitiveType::kPred> { using type = bool; };
template <> struct NativeTypeOf<PrimitiveType::kS8> { using type = int8_t; };
template <> struct NativeTypeOf<PrimitiveType::kS16> { using type = int16_t; };
template <> struct NativeTypeOf<PrimitiveType::kS32> { using type = int32_t; };
template <> struct NativeTypeOf<PrimitiveType::kS64> { using type = int64_t; };
template <> struct NativeTypeOf<PrimitiveType::kU8> { using type = uint8_t; };
template <> struct NativeTypeOf<PrimitiveType::kU16> { using type = uint16_t; };
template <> struct NativeTypeOf<PrimitiveType::kU32> { using type = uint32_t; };
template <> struct NativeTypeOf<PrimitiveType::kU64> { using type = uint64_t; };
template <> struct NativeTypeOf<PrimitiveType::kF16> { using type = Half; };
template <> struct NativeTypeOf<PrimitiveType::kBF16> { using type = BFloat16; };
template <> struct NativeTypeOf<PrimitiveType::kF32> { using type = float; };
template <> struct NativeTypeOf<PrimitiveType::kF64> { using type = double; };

template <typename T> constexpr PrimitiveType PrimitiveTypeOf();
template <> constexpr PrimitiveType PrimitiveTypeOf<bool>() { return PrimitiveType::kPred; }
template <> constexpr PrimitiveType PrimitiveTypeOf<int8_t>() { return PrimitiveType::kS8; }
template <> constexpr PrimitiveType PrimitiveTypeOf<int16_t>() { return PrimitiveType::kS16; }
template <> constexpr PrimitiveType PrimitiveTypeOf<int32_t>() { return PrimitiveType::kS32; }
template <> constexpr PrimitiveType PrimitiveTypeOf<int64_t>() { return PrimitiveType::kS64; }
template <> constexpr PrimitiveType PrimitiveTypeOf<uint8_t>() { return PrimitiveType::kU8; }
template <> constexpr PrimitiveType PrimitiveTypeOf<uint16_t>() { return PrimitiveType::kU16; }
template <> constexpr PrimitiveType PrimitiveTypeOf<uint32_t>() { return PrimitiveType::kU32; }
template <> constexpr PrimitiveType PrimitiveTypeOf<uint64_t>() { return PrimitiveType::kU64; }
template <> constexpr PrimitiveType PrimitiveTypeOf<Half>() { return PrimitiveType::kF16; }
template <> constexpr PrimitiveType PrimitiveTypeOf<BFloat16>() { return PrimitiveType::kBF16; }
template <> constexpr PrimitiveType PrimitiveTypeOf<float>() { return PrimitiveType::kF32; }
template <> constexpr PrimitiveType PrimitiveTypeOf<double>() { return PrimitiveType::kF64; }

// Calls `fn(T{})` with T the storage type of `type`. `type` must be a
// runnable array type; kInvalid and the types without storage are a
// programming error (modules holding them are refused before anything
// computes).
template <typename Fn>
decltype(auto) DispatchPrimitiveType(PrimitiveType type, Fn&& fn) {
  switch (type) {
    case PrimitiveType::kPred: return fn(bool{});
    case PrimitiveType::kS8: return fn(int8_t{});
    case PrimitiveType::kS16: return fn(int16_t{});
    case PrimitiveType::kS32: return fn(int32_t{});
    case PrimitiveType::kS64: return fn(int64_t{});
    case PrimitiveType::kU8: return fn(uint8_t{});
    case PrimitiveType::kU16: return fn(uint16_t{});
    case PrimitiveType::kU32: return fn(uint32_t{});
    case PrimitiveType::kU64: return fn(uint64_t{});
    case PrimitiveType::kF16: return fn(Half{});
    case PrimitiveType::kBF16: return fn(BFloat16{});
    case PrimitiveType::kF32: return fn(float{});
    case PrimitiveType::kF64: return fn(double{});
    default: break;
  }
  __builtin_trap();
}

template <typename T> constexpr bool kIsLowPrecisionFloat =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T> constexpr bool kIsFloat =
    std::is_floating_point_v<T> || kIsLowPrecisionFloat<T>;

}  // namespace sharc::hlo
