// Elementwise ops: unary math, binary arithmetic and logic, compare, select,
// clamp and convert, with XLA's type rules and integer/float semantics.
//
// Every op is one row built by a generic helper (UnaryOp, BinaryOp) from a
// small lambda over the element's compute type. The helpers instantiate a
// tight loop per element type, so the lambdas inline: no per-element
// std::function or virtual call.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/shape.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

// ---------------------------------------------------------------------------
// Element type classes, as bit masks so a row can say which it accepts.

enum TypeClass : unsigned {
  kPredClass = 1,
  kSignedClass = 2,
  kUnsignedClass = 4,
  kFloatClass = 8,
};
constexpr unsigned kIntegral = kSignedClass | kUnsignedClass;
constexpr unsigned kLogical = kPredClass | kIntegral;
constexpr unsigned kSignedOrFloat = kSignedClass | kFloatClass;
constexpr unsigned kNumeric = kIntegral | kFloatClass;
constexpr unsigned kAnyType = kPredClass | kNumeric;

template <typename T>
constexpr unsigned ClassOf() {
  if constexpr (std::is_same_v<T, bool>) {
    return kPredClass;
  } else if constexpr (kIsFloat<T>) {
    return kFloatClass;
  } else if constexpr (std::is_signed_v<T>) {
    return kSignedClass;
  } else {
    return kUnsignedClass;
  }
}

unsigned ClassOf(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return kPredClass;
  if (IsFloatingPoint(type)) return kFloatClass;
  if (IsSignedInteger(type)) return kSignedClass;
  if (IsUnsignedInteger(type)) return kUnsignedClass;
  return 0;
}

std::string ClassNames(unsigned mask) {
  std::vector<std::string> names;
  if (mask & kPredClass) names.push_back("pred");
  if (mask & kSignedClass) names.push_back("signed integer");
  if (mask & kUnsignedClass) names.push_back("unsigned integer");
  if (mask & kFloatClass) names.push_back("floating-point");
  return absl::StrJoin(names, " or ");
}

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() != count) {
    return OpError(inst, "takes ", count, " operands, got ", inst.operand_count());
  }
  return absl::OkStatus();
}

absl::Status ExpectTypeClass(const Instruction& inst, const Shape& shape, unsigned allowed) {
  if ((ClassOf(shape.type()) & allowed) == 0) {
    return OpError(inst, "expects ", ClassNames(allowed), " operands, got ", shape.ToString());
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Element conversions. f16/bf16 compute in float and round back on store.

template <typename T>
using ComputeType = std::conditional_t<kIsLowPrecisionFloat<T>, float, T>;

template <typename Out, typename V>
inline Out StoreAs(V v) {
  if constexpr (kIsLowPrecisionFloat<Out>) {
    return Out(static_cast<float>(v));
  } else {
    return static_cast<Out>(v);
  }
}

// Wide enough unsigned type for wrapping arithmetic on C: unsigned types of
// at least int's width never promote to (signed) int, so overflow is defined.
template <typename C>
using WideUnsigned = std::conditional_t<(sizeof(C) < 8), uint32_t, uint64_t>;

template <typename C>
inline C WrapAdd(C a, C b) {
  using W = WideUnsigned<C>;
  return static_cast<C>(static_cast<W>(a) + static_cast<W>(b));
}
template <typename C>
inline C WrapSub(C a, C b) {
  using W = WideUnsigned<C>;
  return static_cast<C>(static_cast<W>(a) - static_cast<W>(b));
}
template <typename C>
inline C WrapMul(C a, C b) {
  using W = WideUnsigned<C>;
  return static_cast<C>(static_cast<W>(a) * static_cast<W>(b));
}
template <typename C>
inline C WrapNeg(C a) {
  using W = WideUnsigned<C>;
  return static_cast<C>(W{0} - static_cast<W>(a));
}

template <typename C>
constexpr bool kIsFp = std::is_floating_point_v<C>;

// XLA: x / 0 is all bits set (-1); INT_MIN / -1 overflows to INT_MIN.
template <typename C>
inline C IntDivide(C a, C b) {
  if (b == 0) return static_cast<C>(-1);
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return a;
  }
  return static_cast<C>(a / b);
}

// XLA: x % 0 is x; INT_MIN % -1 is 0.
template <typename C>
inline C IntRemainder(C a, C b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<C>) {
    if (a == std::numeric_limits<C>::min() && b == -1) return 0;
  }
  return static_cast<C>(a % b);
}

// Integer exponentiation by squaring with wrap-around. A negative exponent
// gives 1/base^-e truncated: 1 for base 1, +-1 for base -1, 0 otherwise.
template <typename C>
inline C IntPower(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? static_cast<C>(-1) : static_cast<C>(1);
      return 0;
    }
  }
  using W = WideUnsigned<C>;
  W result = 1;
  W b = static_cast<W>(base);
  auto e = static_cast<std::make_unsigned_t<C>>(exponent);
  while (e != 0) {
    if (e & 1) result *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<C>(result);
}

template <typename C>
constexpr unsigned kBits = sizeof(C) * 8;

// Shift amounts are read as unsigned, so negative amounts are out of range
// too; out-of-range shifts give 0 (or the sign fill), as in XLA.
template <typename C>
inline C ShiftLeft(C a, C b) {
  using U = std::make_unsigned_t<C>;
  if (static_cast<U>(b) >= kBits<C>) return 0;
  using W = WideUnsigned<C>;
  return static_cast<C>(static_cast<W>(static_cast<U>(a)) << static_cast<U>(b));
}
template <typename C>
inline C ShiftRightLogical(C a, C b) {
  using U = std::make_unsigned_t<C>;
  if (static_cast<U>(b) >= kBits<C>) return 0;
  return static_cast<C>(static_cast<U>(a) >> static_cast<U>(b));
}
template <typename C>
inline C ShiftRightArithmetic(C a, C b) {
  using U = std::make_unsigned_t<C>;
  using S = std::make_signed_t<C>;
  if (static_cast<U>(b) >= kBits<C>) {
    return static_cast<S>(a) < 0 ? static_cast<C>(-1) : static_cast<C>(0);
  }
  return static_cast<C>(static_cast<S>(a) >> static_cast<U>(b));
}

// maximum/minimum propagate NaN, as XLA does.
template <typename C>
inline C Max(C a, C b) {
  if constexpr (kIsFp<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a > b ? a : b;
}
template <typename C>
inline C Min(C a, C b) {
  if constexpr (kIsFp<C>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return a < b ? a : b;
}

// Float-to-integer conversion as XLA does it: NaN -> 0, out of range
// saturates, otherwise truncate toward zero.
template <typename To, typename From>
inline To ConvertElement(From v) {
  using C = ComputeType<From>;
  C x = static_cast<C>(v);
  if constexpr (std::is_same_v<To, bool>) {
    return x != C(0);
  } else if constexpr (kIsFp<C> && std::is_integral_v<To>) {
    if (std::isnan(x)) return 0;
    // Bounds as powers of two are exact in every float type.
    constexpr double kUpper =
        static_cast<double>(std::numeric_limits<To>::max() / 2 + 1) * 2.0;  // max + 1
    if (static_cast<double>(x) >= kUpper) return std::numeric_limits<To>::max();
    if constexpr (std::is_signed_v<To>) {
      constexpr double kLower = -kUpper;  // exactly min
      if (static_cast<double>(x) <= kLower) return std::numeric_limits<To>::min();
    } else {
      if (x <= C(0)) return 0;
    }
    return static_cast<To>(x);
  } else {
    return StoreAs<To>(x);
  }
}

// Total-order key for floats (XLA's TOTALORDER comparison): -NaN < -inf < ...
// < -0 < +0 < ... < inf < NaN. Flip the magnitude bits of negatives so the
// signed integer order of the bits matches.
template <typename T>
inline auto TotalOrderKey(T v) {
  using Bits = std::conditional_t<
      sizeof(T) == 2, int16_t, std::conditional_t<sizeof(T) == 4, int32_t, int64_t>>;
  Bits bits;
  std::memcpy(&bits, &v, sizeof(T));
  const Bits magnitude = std::numeric_limits<Bits>::max();
  return bits < 0 ? static_cast<Bits>(bits ^ magnitude) : bits;
}

// ---------------------------------------------------------------------------
// The generic loops. `f` receives storage values and returns the stored
// result; the wrappers below adapt compute-type lambdas.

template <typename T, typename Out, typename F>
Literal MapUnaryTyped(const Literal& x, F f) {
  Literal out(Shape(PrimitiveTypeOf<Out>(), x.shape().dims()));
  const T* in = x.data<T>().data();
  Out* o = out.data<Out>().data();
  const int64_t n = x.num_elements();
  for (int64_t i = 0; i < n; ++i) o[i] = f(in[i]);
  return out;
}

template <typename T, typename Out, typename F>
Literal MapBinaryTyped(const Literal& a, const Literal& b, F f) {
  Literal out(Shape(PrimitiveTypeOf<Out>(), a.shape().dims()));
  const T* x = a.data<T>().data();
  const T* y = b.data<T>().data();
  Out* o = out.data<Out>().data();
  const int64_t n = a.num_elements();
  for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
  return out;
}

absl::Status CheckOperandLiterals(const Instruction& inst,
                                  absl::Span<const Literal* const> operands, size_t count) {
  if (operands.size() != count) {
    return OpError(inst, "evaluated with ", operands.size(), " operands, expected ", count);
  }
  for (size_t i = 0; i < count; ++i) {
    if (operands[i] == nullptr || !operands[i]->shape().is_array()) {
      return OpError(inst, "operand ", i, " value is not an array");
    }
  }
  return absl::OkStatus();
}

absl::Status TypeNotSupported(const Instruction& inst, const Shape& shape) {
  return OpError(inst, "has no evaluator for ", shape.ToString());
}

// The common part of every elementwise definition. (Fields are assigned one
// by one: GCC's -Wextra flags designated initializers that skip members.)
OpDef ElementwiseDef(Opcode opcode, int operands) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = operands;
  def.max_operands = operands;
  def.traits.elementwise = true;
  return def;
}

enum class Result { kSameType, kPred };

template <Result kResult, typename T>
using ResultType = std::conditional_t<kResult == Result::kPred, bool, T>;

// A unary elementwise op accepting the type classes in kAllowed; `f` maps a
// compute-type value to the result (rounded to the storage type on store).
template <unsigned kAllowed, Result kResult = Result::kSameType, typename F>
OpDef UnaryOp(Opcode opcode, F f) {
  OpDef def = ElementwiseDef(opcode, 1);
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
    RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
    const Shape& shape = inst.operand(0)->shape();
    RETURN_IF_ERROR(ExpectTypeClass(inst, shape, kAllowed));
    if constexpr (kResult == Result::kPred) return Shape(PrimitiveType::kPred, shape.dims());
    return shape;
  };
  def.evaluate = [f](const Instruction& inst, absl::Span<const Literal* const> operands,
                     EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 1));
    const Literal& x = *operands[0];
    return DispatchPrimitiveType(x.shape().type(), [&](auto tag) -> absl::StatusOr<Literal> {
      using T = decltype(tag);
      if constexpr ((ClassOf<T>() & kAllowed) == 0) {
        return TypeNotSupported(inst, x.shape());
      } else {
        using Out = ResultType<kResult, T>;
        return MapUnaryTyped<T, Out>(
            x, [f](T v) { return StoreAs<Out>(f(static_cast<ComputeType<T>>(v))); });
      }
    });
  };
  return def;
}

absl::StatusOr<Shape> InferSameTypeOperands(const Instruction& inst, unsigned allowed) {
  ASSIGN_OR_RETURN(Shape shape, ExpectSameDimsOperands(inst));
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& other = inst.operand(i)->shape();
    if (other.type() != shape.type()) {
      return OpError(inst, "operand shapes ", shape.ToString(), " and ", other.ToString(),
                     " have different element types");
    }
  }
  RETURN_IF_ERROR(ExpectTypeClass(inst, shape, allowed));
  return shape;
}

absl::Status CheckSameElementCount(const Instruction& inst, const Literal& a, const Literal& b) {
  if (a.shape() != b.shape()) {
    return OpError(inst, "evaluated with operand values ", a.shape().ToString(), " and ",
                   b.shape().ToString());
  }
  return absl::OkStatus();
}

// A binary elementwise op on operands of one element type.
template <unsigned kAllowed, typename F>
OpDef BinaryOp(Opcode opcode, F f, bool commutative = false) {
  OpDef def = ElementwiseDef(opcode, 2);
  def.infer_shape = [](const Instruction& inst) -> absl::StatusOr<Shape> {
    RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
    return InferSameTypeOperands(inst, kAllowed);
  };
  def.evaluate = [f](const Instruction& inst, absl::Span<const Literal* const> operands,
                     EvalContext&) -> absl::StatusOr<Literal> {
    RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 2));
    const Literal& a = *operands[0];
    const Literal& b = *operands[1];
    RETURN_IF_ERROR(CheckSameElementCount(inst, a, b));
    return DispatchPrimitiveType(a.shape().type(), [&](auto tag) -> absl::StatusOr<Literal> {
      using T = decltype(tag);
      if constexpr ((ClassOf<T>() & kAllowed) == 0) {
        return TypeNotSupported(inst, a.shape());
      } else {
        using C = ComputeType<T>;
        return MapBinaryTyped<T, T>(a, b, [f](T x, T y) {
          return StoreAs<T>(f(static_cast<C>(x), static_cast<C>(y)));
        });
      }
    });
  };
  def.traits.commutative = commutative;
  return def;
}

// ---------------------------------------------------------------------------
// compare

enum class Direction { kEq, kNe, kLt, kLe, kGt, kGe };

std::optional<Direction> ParseDirection(std::string_view s) {
  if (s == "EQ") return Direction::kEq;
  if (s == "NE") return Direction::kNe;
  if (s == "LT") return Direction::kLt;
  if (s == "LE") return Direction::kLe;
  if (s == "GT") return Direction::kGt;
  if (s == "GE") return Direction::kGe;
  return std::nullopt;
}

const std::string* EnumAttr(const Instruction& inst, std::string_view name) {
  const AttrValue* v = inst.attr(name);
  return v ? std::get_if<std::string>(v) : nullptr;
}

// Checks direction and type; returns whether the comparison is TOTALORDER.
absl::StatusOr<bool> CheckCompareAttributes(const Instruction& inst, PrimitiveType type) {
  const std::string* direction = EnumAttr(inst, "direction");
  if (direction == nullptr) return OpError(inst, "needs a 'direction' attribute");
  if (!ParseDirection(*direction)) {
    return OpError(inst, "direction '", *direction, "' is not one of EQ, NE, LT, LE, GT, GE");
  }
  const std::string* compare_type = EnumAttr(inst, "type");
  if (inst.has_attr("type") && compare_type == nullptr) {
    return OpError(inst, "'type' attribute must be an identifier");
  }
  if (compare_type == nullptr) return false;
  const unsigned cls = ClassOf(type);
  unsigned expected;
  if (*compare_type == "FLOAT" || *compare_type == "TOTALORDER") {
    expected = kFloatClass;
  } else if (*compare_type == "SIGNED") {
    expected = kSignedClass;
  } else if (*compare_type == "UNSIGNED") {
    expected = kUnsignedClass | kPredClass;
  } else {
    return OpError(inst, "comparison type '", *compare_type,
                   "' is not one of FLOAT, TOTALORDER, SIGNED, UNSIGNED");
  }
  if ((cls & expected) == 0) {
    return OpError(inst, "comparison type ", *compare_type, " does not apply to ",
                   PrimitiveTypeName(type), " operands");
  }
  return *compare_type == "TOTALORDER";
}

absl::StatusOr<Shape> InferCompare(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape shape, InferSameTypeOperands(inst, kAnyType));
  RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  RETURN_IF_ERROR(CheckCompareAttributes(inst, shape.type()).status());
  return Shape(PrimitiveType::kPred, shape.dims());
}

template <typename T, typename Key>
Literal CompareTyped(const Literal& a, const Literal& b, Direction direction, Key key) {
  switch (direction) {
    case Direction::kEq:
      return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) == key(y); });
    case Direction::kNe:
      return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) != key(y); });
    case Direction::kLt:
      return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) < key(y); });
    case Direction::kLe:
      return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) <= key(y); });
    case Direction::kGt:
      return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) > key(y); });
    case Direction::kGe:
      break;
  }
  return MapBinaryTyped<T, bool>(a, b, [key](T x, T y) { return key(x) >= key(y); });
}

absl::StatusOr<Literal> EvaluateCompare(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext&) {
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 2));
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  RETURN_IF_ERROR(CheckSameElementCount(inst, a, b));
  ASSIGN_OR_RETURN(bool total_order, CheckCompareAttributes(inst, a.shape().type()));
  const Direction direction = *ParseDirection(inst.attr_string("direction"));
  return DispatchPrimitiveType(a.shape().type(), [&](auto tag) -> Literal {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      if (total_order) {
        return CompareTyped<T>(a, b, direction, [](T v) { return TotalOrderKey(v); });
      }
    }
    return CompareTyped<T>(a, b, direction,
                           [](T v) { return static_cast<ComputeType<T>>(v); });
  });
}

// ---------------------------------------------------------------------------
// select(pred, on_true, on_false) and clamp(lo, x, hi)

absl::StatusOr<Shape> InferSelect(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  for (int64_t i = 0; i < 3; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& pred = inst.operand(0)->shape();
  const Shape& on_true = inst.operand(1)->shape();
  const Shape& on_false = inst.operand(2)->shape();
  if (pred.type() != PrimitiveType::kPred) {
    return OpError(inst, "predicate must be pred, got ", pred.ToString());
  }
  if (on_true != on_false) {
    return OpError(inst, "operand shapes ", on_true.ToString(), " and ", on_false.ToString(),
                   " differ; both branches must have the same shape");
  }
  if (!pred.is_scalar() && pred.dims() != on_true.dims()) {
    return OpError(inst, "predicate ", pred.ToString(), " must be a scalar or match ",
                   on_true.ToString());
  }
  return on_true;
}

absl::StatusOr<Literal> EvaluateSelect(const Instruction& inst,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext&) {
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 3));
  const Literal& pred = *operands[0];
  const Literal& on_true = *operands[1];
  const Literal& on_false = *operands[2];
  if (on_true.shape() != on_false.shape() || pred.shape().type() != PrimitiveType::kPred ||
      (!pred.shape().is_scalar() && pred.shape().dims() != on_true.shape().dims())) {
    return OpError(inst, "evaluated with mismatched operand values");
  }
  const bool scalar_pred = pred.shape().is_scalar();
  return DispatchPrimitiveType(on_true.shape().type(), [&](auto tag) -> Literal {
    using T = decltype(tag);
    Literal out(on_true.shape());
    const bool* p = pred.data<bool>().data();
    const T* t = on_true.data<T>().data();
    const T* f = on_false.data<T>().data();
    T* o = out.data<T>().data();
    const int64_t n = out.num_elements();
    if (scalar_pred) {
      const T* chosen = p[0] ? t : f;
      for (int64_t i = 0; i < n; ++i) o[i] = chosen[i];
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = p[i] ? t[i] : f[i];
    }
    return out;
  });
}

absl::StatusOr<Shape> InferClamp(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  for (int64_t i = 0; i < 3; ++i) RETURN_IF_ERROR(ExpectArrayOperand(inst, i));
  const Shape& x = inst.operand(1)->shape();
  RETURN_IF_ERROR(ExpectTypeClass(inst, x, kNumeric));
  for (int64_t i : {0, 2}) {
    const Shape& bound = inst.operand(i)->shape();
    if (bound.type() != x.type()) {
      return OpError(inst, "operand shapes ", bound.ToString(), " and ", x.ToString(),
                     " have different element types");
    }
    if (!bound.is_scalar() && bound.dims() != x.dims()) {
      return OpError(inst, i == 0 ? "lower" : "upper", " bound ", bound.ToString(),
                     " must be a scalar or match ", x.ToString());
    }
  }
  return x;
}

absl::StatusOr<Literal> EvaluateClamp(const Instruction& inst,
                                      absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 3));
  const Literal& lo = *operands[0];
  const Literal& x = *operands[1];
  const Literal& hi = *operands[2];
  for (const Literal* bound : {&lo, &hi}) {
    if (bound->shape().type() != x.shape().type() ||
        (!bound->shape().is_scalar() && bound->shape().dims() != x.shape().dims())) {
      return OpError(inst, "evaluated with mismatched operand values");
    }
  }
  return DispatchPrimitiveType(x.shape().type(), [&](auto tag) -> absl::StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (ClassOf<T>() == kPredClass) {
      return TypeNotSupported(inst, x.shape());
    } else {
      using C = ComputeType<T>;
      Literal out(x.shape());
      const T* l = lo.data<T>().data();
      const T* v = x.data<T>().data();
      const T* h = hi.data<T>().data();
      // A scalar bound is read at index 0 for every element.
      const int64_t lo_step = lo.shape().is_scalar() ? 0 : 1;
      const int64_t hi_step = hi.shape().is_scalar() ? 0 : 1;
      T* o = out.data<T>().data();
      const int64_t n = out.num_elements();
      for (int64_t i = 0; i < n; ++i) {
        C r = Min(Max(static_cast<C>(v[i]), static_cast<C>(l[i * lo_step])),
                  static_cast<C>(h[i * hi_step]));
        o[i] = StoreAs<T>(r);
      }
      return out;
    }
  });
}

// ---------------------------------------------------------------------------
// convert: any element type to the declared one, same dims.

absl::StatusOr<Shape> InferConvert(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& operand = inst.operand(0)->shape();
  if (!inst.shape().is_array()) {
    return OpError(inst, "must produce an array, got ", inst.shape().ToString());
  }
  return Shape(inst.shape().type(), operand.dims());
}

absl::StatusOr<Literal> EvaluateConvert(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext&) {
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 1));
  const Literal& x = *operands[0];
  if (!inst.shape().is_array()) {
    return OpError(inst, "must produce an array, got ", inst.shape().ToString());
  }
  const PrimitiveType to = inst.shape().type();
  return DispatchPrimitiveType(x.shape().type(), [&](auto from_tag) -> Literal {
    using From = decltype(from_tag);
    return DispatchPrimitiveType(to, [&](auto to_tag) -> Literal {
      using To = decltype(to_tag);
      return MapUnaryTyped<From, To>(x, [](From v) { return ConvertElement<To>(v); });
    });
  });
}

// ---------------------------------------------------------------------------
// copy: the identity on any value, arrays or tuples.

absl::StatusOr<Shape> InferCopy(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& shape = inst.operand(0)->shape();
  if (!shape.valid()) return OpError(inst, "operand has no shape");
  return shape;
}

absl::StatusOr<Literal> EvaluateCopy(const Instruction& inst,
                                     absl::Span<const Literal* const> operands, EvalContext&) {
  if (operands.size() != 1 || operands[0] == nullptr) {
    return OpError(inst, "evaluated with ", operands.size(), " operands, expected 1");
  }
  return *operands[0];
}

// ---------------------------------------------------------------------------
// reduce-precision: rounds each float to `mantissa_bits` bits of mantissa
// (to nearest, ties to even) and `exponent_bits` bits of exponent (values
// beyond the range become signed infinity, values at or below its smallest
// normal become signed zero), and stores it back in the operand's type. NaN
// stays NaN unless no mantissa bit is left to hold it, when it becomes inf.

template <typename F>
F ReducePrecision(F x, int64_t exponent_bits, int64_t mantissa_bits) {
  using Bits = std::conditional_t<sizeof(F) == 8, uint64_t, uint32_t>;
  constexpr int kBitsTotal = sizeof(F) * 8;
  constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kExponent = kBitsTotal - 1 - kMantissa;
  Bits bits = std::bit_cast<Bits>(x);
  if (mantissa_bits < kMantissa) {
    const int dropped = kMantissa - static_cast<int>(mantissa_bits);
    const Bits last_kept = Bits{1} << dropped;
    // Adding half an ulp minus one, plus the last kept bit, then truncating,
    // rounds to nearest with ties to even.
    const Bits bias = ((last_kept >> 1) - 1) + ((bits & last_kept) >> dropped);
    bits = (bits + bias) & ~(last_kept - 1);
  }
  if (exponent_bits < kExponent) {
    const Bits sign = bits & (Bits{1} << (kBitsTotal - 1));
    const Bits exponent_mask = ((Bits{1} << kExponent) - 1) << kMantissa;
    const Bits bias = (Bits{1} << (kExponent - 1)) - 1;
    const Bits reduced_bias = (Bits{1} << (exponent_bits - 1)) - 1;
    const Bits exponent = bits & exponent_mask;
    if (exponent > ((bias + reduced_bias) << kMantissa)) {
      bits = sign | exponent_mask;
    } else if (exponent <= ((bias - reduced_bias) << kMantissa)) {
      bits = sign;
    }
  }
  if (std::isnan(x)) return mantissa_bits > 0 ? x : std::numeric_limits<F>::infinity();
  return std::bit_cast<F>(bits);
}

absl::StatusOr<Shape> InferReducePrecision(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& shape = inst.operand(0)->shape();
  RETURN_IF_ERROR(ExpectTypeClass(inst, shape, kFloatClass));
  const int64_t exponent_bits = inst.attr_int("exponent_bits");
  const int64_t mantissa_bits = inst.attr_int("mantissa_bits");
  if (exponent_bits < 1) {
    return OpError(inst, "exponent_bits must be at least 1, got ", exponent_bits);
  }
  if (mantissa_bits < 0) {
    return OpError(inst, "mantissa_bits must not be negative, got ", mantissa_bits);
  }
  return shape;
}

absl::StatusOr<Literal> EvaluateReducePrecision(const Instruction& inst,
                                                absl::Span<const Literal* const> operands,
                                                EvalContext&) {
  RETURN_IF_ERROR(CheckOperandLiterals(inst, operands, 1));
  const Literal& x = *operands[0];
  const int64_t exponent_bits = inst.attr_int("exponent_bits");
  const int64_t mantissa_bits = inst.attr_int("mantissa_bits");
  return DispatchPrimitiveType(x.shape().type(), [&](auto tag) -> absl::StatusOr<Literal> {
    using T = decltype(tag);
    if constexpr (ClassOf<T>() != kFloatClass) {
      return TypeNotSupported(inst, x.shape());
    } else {
      // f16/bf16 reduce in float: their values and every reduced value that
      // fits them are exact there.
      using C = ComputeType<T>;
      return MapUnaryTyped<T, T>(x, [&](T v) {
        return StoreAs<T>(ReducePrecision(static_cast<C>(v), exponent_bits, mantissa_bits));
      });
    }
  });
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& registry) {
  // Floating-point math.
  registry.Register(UnaryOp<kFloatClass>(Opcode::kAcos, [](auto x) { return std::acos(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kAcosh, [](auto x) { return std::acosh(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kAsin, [](auto x) { return std::asin(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kAsinh, [](auto x) { return std::asinh(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kAtanh, [](auto x) { return std::atanh(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kCosh, [](auto x) { return std::cosh(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kErf, [](auto x) { return std::erf(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kSinh, [](auto x) { return std::sinh(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kCbrt, [](auto x) { return std::cbrt(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kCeil, [](auto x) { return std::ceil(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kCos, [](auto x) { return std::cos(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kExp, [](auto x) { return std::exp(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kExpm1, [](auto x) { return std::expm1(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kFloor, [](auto x) { return std::floor(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kLog, [](auto x) { return std::log(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kLog1p, [](auto x) { return std::log1p(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kLogistic, [](auto x) {
    using C = decltype(x);
    return C(1) / (C(1) + std::exp(-x));
  }));
  registry.Register(
      UnaryOp<kFloatClass>(Opcode::kRoundNearestAfz, [](auto x) { return std::round(x); }));
  // nearbyint rounds ties to even in the default rounding mode.
  registry.Register(
      UnaryOp<kFloatClass>(Opcode::kRoundNearestEven, [](auto x) { return std::nearbyint(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kRsqrt, [](auto x) {
    using C = decltype(x);
    return C(1) / std::sqrt(x);
  }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kSin, [](auto x) { return std::sin(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kSqrt, [](auto x) { return std::sqrt(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kTan, [](auto x) { return std::tan(x); }));
  registry.Register(UnaryOp<kFloatClass>(Opcode::kTanh, [](auto x) { return std::tanh(x); }));
  registry.Register(UnaryOp<kFloatClass, Result::kPred>(
      Opcode::kIsFinite, [](auto x) { return static_cast<bool>(std::isfinite(x)); }));

  // Sign-aware ops; integers wrap (abs(INT_MIN) == INT_MIN).
  registry.Register(UnaryOp<kSignedOrFloat>(Opcode::kAbs, [](auto x) {
    using C = decltype(x);
    if constexpr (kIsFp<C>) {
      return std::fabs(x);
    } else {
      return x < 0 ? WrapNeg(x) : x;
    }
  }));
  registry.Register(UnaryOp<kNumeric>(Opcode::kNegate, [](auto x) {
    using C = decltype(x);
    if constexpr (kIsFp<C>) {
      return -x;
    } else {
      return WrapNeg(x);
    }
  }));
  registry.Register(UnaryOp<kNumeric>(Opcode::kSign, [](auto x) {
    using C = decltype(x);
    if constexpr (kIsFp<C>) {
      if (std::isnan(x) || x == C(0)) return x;  // keeps NaN and the sign of zero
      return x > C(0) ? C(1) : C(-1);
    } else if constexpr (std::is_unsigned_v<C>) {
      return static_cast<C>(x != 0);
    } else {
      return static_cast<C>((x > 0) - (x < 0));
    }
  }));
  registry.Register(UnaryOp<kLogical>(Opcode::kNot, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>) {
      return !x;
    } else {
      return static_cast<C>(~x);
    }
  }));
  // Bit counts of integers, on the bits as written (two's complement).
  registry.Register(UnaryOp<kIntegral>(Opcode::kPopcnt, [](auto x) {
    using C = decltype(x);
    return static_cast<C>(std::popcount(static_cast<std::make_unsigned_t<C>>(x)));
  }));
  registry.Register(UnaryOp<kIntegral>(Opcode::kClz, [](auto x) {
    using C = decltype(x);
    return static_cast<C>(std::countl_zero(static_cast<std::make_unsigned_t<C>>(x)));
  }));
  OpDef reduce_precision = ElementwiseDef(Opcode::kReducePrecision, 1);
  reduce_precision.attributes = {{"exponent_bits", AttrKind::kInt, true},
                                 {"mantissa_bits", AttrKind::kInt, true}};
  reduce_precision.infer_shape = InferReducePrecision;
  reduce_precision.evaluate = EvaluateReducePrecision;
  registry.Register(std::move(reduce_precision));

  // copy also takes tuples (XLA copies whole tuples), so it is not a UnaryOp.
  OpDef copy = ElementwiseDef(Opcode::kCopy, 1);
  copy.infer_shape = InferCopy;
  copy.evaluate = EvaluateCopy;
  registry.Register(std::move(copy));

  OpDef convert = ElementwiseDef(Opcode::kConvert, 1);
  convert.infer_shape = InferConvert;
  convert.evaluate = EvaluateConvert;
  registry.Register(std::move(convert));

  // Arithmetic. Integers wrap; see IntDivide/IntRemainder for division.
  constexpr bool kCommutative = true;
  registry.Register(BinaryOp<kNumeric>(
      Opcode::kAdd,
      [](auto a, auto b) {
        if constexpr (kIsFp<decltype(a)>) {
          return a + b;
        } else {
          return WrapAdd(a, b);
        }
      },
      kCommutative));
  registry.Register(BinaryOp<kNumeric>(Opcode::kSubtract, [](auto a, auto b) {
    if constexpr (kIsFp<decltype(a)>) {
      return a - b;
    } else {
      return WrapSub(a, b);
    }
  }));
  registry.Register(BinaryOp<kNumeric>(
      Opcode::kMultiply,
      [](auto a, auto b) {
        if constexpr (kIsFp<decltype(a)>) {
          return a * b;
        } else {
          return WrapMul(a, b);
        }
      },
      kCommutative));
  registry.Register(BinaryOp<kNumeric>(Opcode::kDivide, [](auto a, auto b) {
    if constexpr (kIsFp<decltype(a)>) {
      return a / b;
    } else {
      return IntDivide(a, b);
    }
  }));
  registry.Register(BinaryOp<kNumeric>(Opcode::kRemainder, [](auto a, auto b) {
    if constexpr (kIsFp<decltype(a)>) {
      return std::fmod(a, b);
    } else {
      return IntRemainder(a, b);
    }
  }));
  registry.Register(BinaryOp<kNumeric>(Opcode::kPower, [](auto a, auto b) {
    if constexpr (kIsFp<decltype(a)>) {
      return std::pow(a, b);
    } else {
      return IntPower(a, b);
    }
  }));
  registry.Register(
      BinaryOp<kFloatClass>(Opcode::kAtan2, [](auto a, auto b) { return std::atan2(a, b); }));
  registry.Register(BinaryOp<kAnyType>(
      Opcode::kMaximum, [](auto a, auto b) { return Max(a, b); }, kCommutative));
  registry.Register(BinaryOp<kAnyType>(
      Opcode::kMinimum, [](auto a, auto b) { return Min(a, b); }, kCommutative));

  // Bitwise logic on pred and integers.
  registry.Register(BinaryOp<kLogical>(
      Opcode::kAnd, [](auto a, auto b) { return static_cast<decltype(a)>(a & b); },
      kCommutative));
  registry.Register(BinaryOp<kLogical>(
      Opcode::kOr, [](auto a, auto b) { return static_cast<decltype(a)>(a | b); },
      kCommutative));
  registry.Register(BinaryOp<kLogical>(
      Opcode::kXor, [](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); },
      kCommutative));
  registry.Register(
      BinaryOp<kIntegral>(Opcode::kShiftLeft, [](auto a, auto b) { return ShiftLeft(a, b); }));
  registry.Register(BinaryOp<kIntegral>(
      Opcode::kShiftRightLogical, [](auto a, auto b) { return ShiftRightLogical(a, b); }));
  registry.Register(BinaryOp<kIntegral>(
      Opcode::kShiftRightArithmetic, [](auto a, auto b) { return ShiftRightArithmetic(a, b); }));

  OpDef compare = ElementwiseDef(Opcode::kCompare, 2);
  compare.attributes = {{"direction", AttrKind::kEnum, /*required=*/true},
                        {"type", AttrKind::kEnum, /*required=*/false}};
  compare.infer_shape = InferCompare;
  compare.evaluate = EvaluateCompare;
  registry.Register(std::move(compare));

  OpDef select = ElementwiseDef(Opcode::kSelect, 3);
  select.infer_shape = InferSelect;
  select.evaluate = EvaluateSelect;
  registry.Register(std::move(select));

  OpDef clamp = ElementwiseDef(Opcode::kClamp, 3);
  clamp.infer_shape = InferClamp;
  clamp.evaluate = EvaluateClamp;
  registry.Register(std::move(clamp));
}

}  // namespace sharc::hlo
