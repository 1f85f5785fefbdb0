// Halide lowerings of the elementwise ops, with the interpreter's semantics
// (hlo/ops/elementwise_ops.cc): integers wrap (arithmetic is done in the
// unsigned type of the same width, where Halide defines overflow), integer
// division by zero gives -1, out-of-range shifts give 0 or the sign fill,
// maximum/minimum propagate NaN, float-to-integer converts saturate.
//
// Transcendentals that Halide would lower to scalar libm calls anyway, and
// whose exact libm result the interpreter gives (cbrt, expm1, log1p, fmod,
// pow, atan2, tan), call libm directly. f32 tanh and exp do not: they use
// the vectorised forms of vector_math.h.
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen/cpu_tuning.h"
#include "codegen/lowering.h"
#include "codegen/reducer.h"
#include "codegen/vector_math.h"

namespace sharc::codegen {
namespace {

using Halide::Expr;
using hlo::PrimitiveType;

// How softmax's exp gets the lanes that round to +0 on the core kernels
// are tuned for.
ExpUnderflow HostExpUnderflow() {
  return HostCpuTuning().underflow_takes_microcode_assist ? ExpUnderflow::kSelectZero
                                                          : ExpUnderflow::kScaleByZero;
}

bool IsFloat(PrimitiveType t) { return hlo::IsFloatingPoint(t); }
bool IsF64(PrimitiveType t) { return t == PrimitiveType::kF64; }

// A pure libm call on the compute type (f32 functions for f16/bf16/f32).
Expr Libm(const std::string& name, PrimitiveType t, std::vector<Expr> args) {
  Halide::Type ct = ComputeType(t);
  std::string fn = ct.bits() == 64 ? name : name + "f";
  return Halide::Internal::Call::make(ct, fn, args, Halide::Internal::Call::PureExtern);
}

Halide::Type UnsignedOf(Halide::Type t) { return Halide::UInt(t.bits()); }

// Integer arithmetic that wraps: done in the unsigned type of the same width.
template <typename Op>
Expr Wrapping(const Expr& a, const Expr& b, Op op) {
  Halide::Type u = UnsignedOf(a.type());
  return Halide::cast(a.type(), op(Halide::cast(u, a), Halide::cast(u, b)));
}

// ---- generic builders ------------------------------------------------------

// `f` maps operand values in compute type (and the operand's element type) to
// the result in compute type (or bool for predicate results).
using ElementFn = std::function<absl::StatusOr<Expr>(const std::vector<Expr>&, PrimitiveType)>;

// Reads operand i at `index`, or at () when it is a scalar operand of a
// non-scalar result (select's predicate, clamp's bounds).
Expr Read(const LoweredValue& v, const std::vector<Expr>& index) {
  if (v.shape.rank() == 0) return Call(v.func, {});
  return Call(v.func, index);
}

LowerFn Elementwise(ElementFn f) {
  return [f](const hlo::Instruction& inst,
             absl::Span<const LoweredValue> ops) -> absl::StatusOr<Lowered> {
    if (!inst.shape().is_array()) return LoweringError(inst, "expects an array result");
    std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
    std::vector<Expr> index = AsExprs(vars);
    std::vector<Expr> args;
    // Operand type: the first non-pred operand for select/clamp, else operand 0.
    PrimitiveType type = ops.empty() ? inst.shape().type() : ops[0].shape.type();
    for (const LoweredValue& v : ops) args.push_back(ToCompute(Read(v, index), v.shape.type()));
    if (inst.opcode() == hlo::Opcode::kSelect) type = ops[1].shape.type();
    if (inst.opcode() == hlo::Opcode::kClamp) type = ops[1].shape.type();
    absl::StatusOr<Expr> value = f(args, type);
    if (!value.ok()) return LoweringError(inst, std::string(value.status().message()));
    Lowered out;
    out.func = Halide::Func(HalideName(hlo::OpcodeName(inst.opcode()), inst));
    Define(out.func, vars, ToStorage(*value, inst.shape().type()));
    return out;
  };
}

template <typename F>
LowerFn FloatUnary(F f) {
  return Elementwise([f](const std::vector<Expr>& a, PrimitiveType t) -> absl::StatusOr<Expr> {
    if (!IsFloat(t)) return absl::InvalidArgumentError("expects a floating-point operand");
    return f(a[0], t);
  });
}

template <typename F>
LowerFn Binary(F f) {
  return Elementwise([f](const std::vector<Expr>& a, PrimitiveType t) -> absl::StatusOr<Expr> {
    return f(a[0], a[1], t);
  });
}

// ---- individual ops with more than one line --------------------------------

Expr Divide(const Expr& a, const Expr& b, PrimitiveType t) {
  if (IsFloat(t)) return a / b;
  Halide::Type ty = a.type();
  Expr overflow = const_false();
  if (ty.is_int()) overflow = a == ty.min() && b == -1;
  Expr safe_b = Halide::select(b == 0 || overflow, make_const(ty, 1), b);
  Expr minus_one = ty.is_uint() ? Expr(ty.max()) : make_const(ty, -1);
  return Halide::select(b == 0, minus_one, overflow, a, Halide::div_round_to_zero(a, safe_b));
}

Expr Remainder(const Expr& a, const Expr& b, PrimitiveType t) {
  if (IsFloat(t)) return Libm("fmod", t, {a, b});
  Halide::Type ty = a.type();
  Expr overflow = const_false();
  if (ty.is_int()) overflow = a == ty.min() && b == -1;
  Expr safe_b = Halide::select(b == 0 || overflow, make_const(ty, 1), b);
  return Halide::select(b == 0, a, overflow, make_const(ty, 0),
                        Halide::mod_round_to_zero(a, safe_b));
}

// Exponentiation by squaring, unrolled over the exponent's bits.
Expr IntPower(const Expr& base, const Expr& exponent) {
  Halide::Type ty = base.type();
  Halide::Type u = UnsignedOf(ty);
  Expr result = make_const(u, 1);
  Expr b = Halide::cast(u, base);
  Expr e = Halide::cast(u, exponent);
  for (int bit = 0; bit < ty.bits(); ++bit) {
    Expr set = ((e >> make_const(u, bit)) & make_const(u, 1)) != 0;
    result = Halide::select(set, result * b, result);
    b = b * b;
  }
  Expr r = Halide::cast(ty, result);
  if (!ty.is_int()) return r;
  Expr one = make_const(ty, 1);
  Expr negative = Halide::select(base == 1, one, base == -1,
                                 Halide::select((exponent & one) != 0, make_const(ty, -1), one),
                                 make_const(ty, 0));
  return Halide::select(exponent < 0, negative, r);
}

// Shift amounts read as unsigned (negative ones are out of range too);
// returns the amount clamped to bits-1 and sets whether it was in range.
Expr ShiftAmount(const Expr& b, int bits, Expr* in_range) {
  Halide::Type u = UnsignedOf(b.type());
  Expr ub = Halide::cast(u, b);
  *in_range = ub < make_const(u, bits);
  return Halide::min(ub, make_const(u, bits - 1));
}

Expr ShiftLeft(const Expr& a, const Expr& b) {
  Expr in_range;
  Expr amount = ShiftAmount(b, a.type().bits(), &in_range);
  Halide::Type u = UnsignedOf(a.type());
  Expr shifted = Halide::cast(a.type(), Halide::cast(u, a) << amount);
  return Halide::select(in_range, shifted, make_const(a.type(), 0));
}

Expr ShiftRightLogical(const Expr& a, const Expr& b) {
  Expr in_range;
  Expr amount = ShiftAmount(b, a.type().bits(), &in_range);
  Halide::Type u = UnsignedOf(a.type());
  Expr shifted = Halide::cast(a.type(), Halide::cast(u, a) >> amount);
  return Halide::select(in_range, shifted, make_const(a.type(), 0));
}

Expr ShiftRightArithmetic(const Expr& a, const Expr& b) {
  // Shifting by bits-1 gives the sign fill, which is also the out-of-range
  // result, so clamping the amount is enough.
  Expr in_range;
  Expr amount = ShiftAmount(b, a.type().bits(), &in_range);
  Halide::Type s = Halide::Int(a.type().bits());
  return Halide::cast(a.type(), Halide::cast(s, a) >> Halide::cast(s, amount));
}

Expr Sign(const Expr& x, PrimitiveType t) {
  Halide::Type ty = x.type();
  Expr one = make_const(ty, 1), zero = make_const(ty, 0);
  if (IsFloat(t)) {
    return Halide::select(Halide::is_nan(x) || x == zero, x, x > zero, one,
                          make_const(ty, -1));
  }
  if (ty.is_uint()) return Halide::select(x != zero, one, zero);
  return Halide::select(x > zero, one, x < zero, make_const(ty, -1), zero);
}

Expr RoundAwayFromZero(const Expr& x) {
  Expr t = Halide::trunc(x);
  Expr away = t + Halide::select(x < 0, make_const(x.type(), -1),
                                 make_const(x.type(), 1));
  return Halide::select(Halide::abs(x - t) >= make_const(x.type(), 0.5), away, t);
}

Expr Cbrt(const Expr& x, PrimitiveType t) { return Libm("cbrt", t, {x}); }

// convert: the interpreter goes through the source's compute type and, for
// f16/bf16 results, through float.
absl::StatusOr<Lowered> LowerConvert(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  if (!inst.shape().is_array()) return LoweringError(inst, "expects an array result");
  PrimitiveType from = ops[0].shape.type();
  PrimitiveType to = inst.shape().type();
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Expr x = ToCompute(Call(ops[0].func, AsExprs(vars)), from);
  Expr value;
  Halide::Type to_type = StorageType(to);
  if (to == PrimitiveType::kPred) {
    value = from == PrimitiveType::kPred ? x : x != make_const(x.type(), 0);
  } else if (IsFloat(from) && hlo::IsInteger(to)) {
    Halide::Type ft = x.type();
    // max + 1 and min are powers of two, exact in every float type.
    double upper = to_type.is_int() ? std::ldexp(1.0, to_type.bits() - 1)
                                    : std::ldexp(1.0, to_type.bits());
    Expr hi = make_const(ft, upper);
    Expr saturated_low = to_type.is_int() ? Expr(to_type.min()) : make_const(to_type, 0);
    Expr low_bound = to_type.is_int() ? make_const(ft, -upper) : make_const(ft, 0.0);
    value = Halide::select(Halide::is_nan(x), make_const(to_type, 0), x >= hi,
                           Expr(to_type.max()), x <= low_bound, saturated_low,
                           Halide::cast(to_type, x));
  } else if (to == PrimitiveType::kF16 || to == PrimitiveType::kBF16) {
    value = ToStorage(Halide::cast(Halide::Float(32), x), to);
  } else {
    value = Halide::cast(to_type, x);
  }
  Lowered out;
  out.func = Halide::Func(HalideName("convert", inst));
  Define(out.func, vars, value);
  return out;
}

// compare: FLOAT/SIGNED/UNSIGNED compare values; TOTALORDER compares the
// float bits with the magnitude bits of negatives flipped.
absl::StatusOr<Lowered> LowerCompare(const hlo::Instruction& inst,
                                     absl::Span<const LoweredValue> ops) {
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  std::vector<Expr> index = AsExprs(vars);
  PrimitiveType t = ops[0].shape.type();
  Expr a = Call(ops[0].func, index), b = Call(ops[1].func, index);
  bool total_order = inst.has_attr("type") && inst.attr_string("type") == "TOTALORDER";
  if (total_order && IsFloat(t)) {
    Halide::Type bits = Halide::Int(a.type().bits());
    auto key = [&](const Expr& v) {
      Expr k = Halide::reinterpret(bits, v);
      return Halide::select(k < 0, k ^ Expr(bits.max()), k);
    };
    a = key(a);
    b = key(b);
  } else if (t == PrimitiveType::kPred) {
    a = Halide::cast(Halide::UInt(8), a);
    b = Halide::cast(Halide::UInt(8), b);
  } else {
    a = ToCompute(a, t);
    b = ToCompute(b, t);
  }
  const std::string& dir = inst.attr_string("direction");
  Expr r;
  if (dir == "EQ") r = a == b;
  else if (dir == "NE") r = a != b;
  else if (dir == "LT") r = a < b;
  else if (dir == "LE") r = a <= b;
  else if (dir == "GT") r = a > b;
  else if (dir == "GE") r = a >= b;
  else return LoweringError(inst, "unknown comparison direction '" + dir + "'");
  if (a.type().is_float()) {
    // Halide's simplifier rewrites a <= b as !(b < a), which is true for
    // NaN; spell out IEEE's unordered result.
    Expr unordered = Halide::is_nan(a) || Halide::is_nan(b);
    r = dir == "NE" ? (r || unordered) : (r && !unordered);
  }
  Lowered out;
  out.func = Halide::Func(HalideName("compare", inst));
  Define(out.func, vars, r);
  return out;
}

// reduce-precision on the compute type's bits, as the interpreter does it
// (hlo/ops/elementwise_ops.cc, ReducePrecision): round the mantissa to
// nearest even, flush what leaves the reduced exponent range to inf or 0.
Expr ReducePrecisionBits(const Expr& x, int64_t exponent_bits, int64_t mantissa_bits) {
  const int width = x.type().bits();
  const int mantissa = width == 64 ? 52 : 23;
  const int exponent = width - 1 - mantissa;
  Halide::Type u = Halide::UInt(width);
  auto k = [&](uint64_t v) { return make_const(u, v); };
  Expr bits = Halide::reinterpret(u, x);
  if (mantissa_bits < mantissa) {
    const int dropped = mantissa - static_cast<int>(mantissa_bits);
    const uint64_t last_kept = uint64_t{1} << dropped;
    Expr bias = k((last_kept >> 1) - 1) + ((bits & k(last_kept)) >> k(dropped));
    bits = (bits + bias) & k(~(last_kept - 1) & (width == 64 ? ~uint64_t{0} : 0xffffffffu));
  }
  if (exponent_bits < exponent) {
    const uint64_t exponent_mask = ((uint64_t{1} << exponent) - 1) << mantissa;
    const uint64_t bias = (uint64_t{1} << (exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    Expr sign = bits & k(uint64_t{1} << (width - 1));
    Expr biased_exponent = bits & k(exponent_mask);
    bits = Halide::select(biased_exponent > k((bias + reduced_bias) << mantissa),
                          sign | k(exponent_mask),
                          biased_exponent <= k((bias - reduced_bias) << mantissa), sign, bits);
  }
  Expr nan_result = mantissa_bits > 0 ? x : make_const(x.type(), INFINITY);
  return Halide::select(Halide::is_nan(x), nan_result, Halide::reinterpret(x.type(), bits));
}

absl::StatusOr<Lowered> LowerReducePrecision(const hlo::Instruction& inst,
                                             absl::Span<const LoweredValue> ops) {
  const int64_t exponent_bits = inst.attr_int("exponent_bits");
  const int64_t mantissa_bits = inst.attr_int("mantissa_bits");
  return FloatUnary([=](Expr x, PrimitiveType) {
    return ReducePrecisionBits(x, exponent_bits, mantissa_bits);
  })(inst, ops);
}

absl::StatusOr<Lowered> LowerCopy(const hlo::Instruction& inst,
                                  absl::Span<const LoweredValue> ops) {
  if (!inst.shape().is_array()) return LoweringError(inst, "copies of tuples are not kernels");
  std::vector<Halide::Var> vars = HloVars(inst.shape().rank());
  Lowered out;
  out.func = Halide::Func(HalideName("copy", inst));
  Define(out.func, vars, Call(ops[0].func, AsExprs(vars)));
  return out;
}

}  // namespace

void RegisterElementwiseLowerings(LoweringTable& table) {
  using hlo::Opcode;
  table.Add(Opcode::kCbrt, FloatUnary([](Expr x, PrimitiveType t) { return Cbrt(x, t); }));
  table.Add(Opcode::kCeil, FloatUnary([](Expr x, PrimitiveType) { return Halide::ceil(x); }));
  table.Add(Opcode::kFloor, FloatUnary([](Expr x, PrimitiveType) { return Halide::floor(x); }));
  table.Add(Opcode::kCos, FloatUnary([](Expr x, PrimitiveType t) { return Libm("cos", t, {x}); }));
  table.Add(Opcode::kSin, FloatUnary([](Expr x, PrimitiveType t) { return Libm("sin", t, {x}); }));
  table.Add(Opcode::kTan, FloatUnary([](Expr x, PrimitiveType t) { return Libm("tan", t, {x}); }));
  const std::pair<Opcode, const char*> kLibmUnary[] = {
      {Opcode::kAcos, "acos"},   {Opcode::kAcosh, "acosh"}, {Opcode::kAsin, "asin"},
      {Opcode::kAsinh, "asinh"}, {Opcode::kAtanh, "atanh"}, {Opcode::kCosh, "cosh"},
      {Opcode::kErf, "erf"},     {Opcode::kSinh, "sinh"}};
  for (const auto& [op, name] : kLibmUnary) {
    const std::string fn = name;
    table.Add(op, FloatUnary([fn](Expr x, PrimitiveType t) { return Libm(fn, t, {x}); }));
  }
  table.Add(Opcode::kExp, [](const hlo::Instruction& inst, absl::Span<const LoweredValue> ops) {
    // softmax's exp(x - max(x)) cannot overflow: leave out what handles it.
    const bool non_positive = !ops.empty() && ops[0].non_positive;
    return FloatUnary([non_positive](Expr x, PrimitiveType t) {
      if (IsF64(t)) return Halide::exp(x);
      return non_positive ? VectorExpOfNonPositive(x, HostExpUnderflow()) : VectorExp(x);
    })(inst, ops);
  });
  table.Add(Opcode::kExpm1,
            FloatUnary([](Expr x, PrimitiveType t) { return Libm("expm1", t, {x}); }));
  table.Add(Opcode::kLog, FloatUnary([](Expr x, PrimitiveType) { return Halide::log(x); }));
  table.Add(Opcode::kLog1p,
            FloatUnary([](Expr x, PrimitiveType t) { return Libm("log1p", t, {x}); }));
  table.Add(Opcode::kLogistic, FloatUnary([](Expr x, PrimitiveType t) {
              return 1 / (1 + (IsF64(t) ? Halide::exp(-x) : VectorExp(-x)));
            }));
  table.Add(Opcode::kRoundNearestAfz,
            FloatUnary([](Expr x, PrimitiveType) { return RoundAwayFromZero(x); }));
  // Halide's round() rounds ties to even.
  table.Add(Opcode::kRoundNearestEven,
            FloatUnary([](Expr x, PrimitiveType) { return Halide::round(x); }));
  table.Add(Opcode::kRsqrt,
            FloatUnary([](Expr x, PrimitiveType) { return 1 / Halide::sqrt(x); }));
  table.Add(Opcode::kSqrt, FloatUnary([](Expr x, PrimitiveType) { return Halide::sqrt(x); }));
  table.Add(Opcode::kTanh, FloatUnary([](Expr x, PrimitiveType t) {
              return IsF64(t) ? Libm("tanh", t, {x}) : VectorTanh(x);
            }));
  table.Add(Opcode::kIsFinite,
            FloatUnary([](Expr x, PrimitiveType) { return Halide::is_finite(x); }));

  table.Add(Opcode::kAbs, Elementwise([](const std::vector<Expr>& a,
                                         PrimitiveType t) -> absl::StatusOr<Expr> {
              if (IsFloat(t)) return Halide::abs(a[0]);
              return Halide::cast(a[0].type(), Halide::abs(a[0]));  // abs(INT_MIN) wraps
            }));
  table.Add(Opcode::kNegate, Elementwise([](const std::vector<Expr>& a,
                                            PrimitiveType t) -> absl::StatusOr<Expr> {
              if (IsFloat(t)) {
                // Flip the sign bit: Halide's -x is 0 - x, which gives +0 for +0
                // where negate gives -0.
                const Halide::Type ft = a[0].type();
                const Halide::Type bits = Halide::UInt(ft.bits());
                return Halide::reinterpret(
                    ft, Halide::reinterpret(bits, a[0]) ^ make_const(bits, uint64_t{1} << (ft.bits() - 1)));
              }
              return Wrapping(make_const(a[0].type(), 0), a[0],
                              [](Expr x, Expr y) { return x - y; });
            }));
  table.Add(Opcode::kSign, Elementwise([](const std::vector<Expr>& a,
                                          PrimitiveType t) -> absl::StatusOr<Expr> {
              return Sign(a[0], t);
            }));
  table.Add(Opcode::kNot, Elementwise([](const std::vector<Expr>& a,
                                         PrimitiveType) -> absl::StatusOr<Expr> {
              return a[0].type().is_bool() ? !a[0] : ~a[0];
            }));
  table.Add(Opcode::kPopcnt, Elementwise([](const std::vector<Expr>& a,
                                            PrimitiveType) -> absl::StatusOr<Expr> {
              return Halide::cast(a[0].type(), Halide::popcount(a[0]));
            }));
  table.Add(Opcode::kClz, Elementwise([](const std::vector<Expr>& a,
                                         PrimitiveType) -> absl::StatusOr<Expr> {
              return Halide::cast(a[0].type(), Halide::count_leading_zeros(a[0]));
            }));
  table.Add(Opcode::kReducePrecision, LowerReducePrecision);
  table.Add(Opcode::kCopy, LowerCopy);
  table.Add(Opcode::kConvert, LowerConvert);

  table.Add(Opcode::kAdd, Binary([](Expr a, Expr b, PrimitiveType t) {
              return IsFloat(t) ? a + b : Wrapping(a, b, [](Expr x, Expr y) { return x + y; });
            }));
  table.Add(Opcode::kSubtract, Binary([](Expr a, Expr b, PrimitiveType t) {
              return IsFloat(t) ? a - b : Wrapping(a, b, [](Expr x, Expr y) { return x - y; });
            }));
  table.Add(Opcode::kMultiply, Binary([](Expr a, Expr b, PrimitiveType t) {
              return IsFloat(t) ? a * b : Wrapping(a, b, [](Expr x, Expr y) { return x * y; });
            }));
  table.Add(Opcode::kDivide, Binary(Divide));
  table.Add(Opcode::kRemainder, Binary(Remainder));
  table.Add(Opcode::kPower, Binary([](Expr a, Expr b, PrimitiveType t) {
              return IsFloat(t) ? Libm("pow", t, {a, b}) : IntPower(a, b);
            }));
  table.Add(Opcode::kAtan2,
            Binary([](Expr a, Expr b, PrimitiveType t) { return Libm("atan2", t, {a, b}); }));
  table.Add(Opcode::kMaximum,
            Binary([](Expr a, Expr b, PrimitiveType) { return Combine(hlo::Opcode::kMaximum, a, b); }));
  table.Add(Opcode::kMinimum,
            Binary([](Expr a, Expr b, PrimitiveType) { return Combine(hlo::Opcode::kMinimum, a, b); }));
  table.Add(Opcode::kAnd, Binary([](Expr a, Expr b, PrimitiveType) {
              return a.type().is_bool() ? (a && b) : (a & b);
            }));
  table.Add(Opcode::kOr, Binary([](Expr a, Expr b, PrimitiveType) {
              return a.type().is_bool() ? (a || b) : (a | b);
            }));
  table.Add(Opcode::kXor, Binary([](Expr a, Expr b, PrimitiveType) {
              return a.type().is_bool() ? (a != b) : (a ^ b);
            }));
  table.Add(Opcode::kShiftLeft, Binary([](Expr a, Expr b, PrimitiveType) { return ShiftLeft(a, b); }));
  table.Add(Opcode::kShiftRightLogical,
            Binary([](Expr a, Expr b, PrimitiveType) { return ShiftRightLogical(a, b); }));
  table.Add(Opcode::kShiftRightArithmetic,
            Binary([](Expr a, Expr b, PrimitiveType) { return ShiftRightArithmetic(a, b); }));
  table.Add(Opcode::kCompare, LowerCompare);
  table.Add(Opcode::kSelect, Elementwise([](const std::vector<Expr>& a,
                                            PrimitiveType) -> absl::StatusOr<Expr> {
              return Halide::select(a[0], a[1], a[2]);
            }));
  table.Add(Opcode::kClamp, Elementwise([](const std::vector<Expr>& a,
                                           PrimitiveType) -> absl::StatusOr<Expr> {
              return Combine(hlo::Opcode::kMinimum, Combine(hlo::Opcode::kMaximum, a[1], a[0]), a[2]);
            }));
  table.MarkCheap({Opcode::kAdd, Opcode::kSubtract, Opcode::kNegate, Opcode::kAbs, Opcode::kNot,
                   Opcode::kAnd, Opcode::kOr, Opcode::kXor, Opcode::kSelect, Opcode::kCopy});
  table.MarkComputeBound({Opcode::kAtan2, Opcode::kCbrt, Opcode::kCos, Opcode::kDivide, Opcode::kExp,
                          Opcode::kExpm1, Opcode::kLog, Opcode::kLog1p, Opcode::kLogistic,
                          Opcode::kPower, Opcode::kRemainder, Opcode::kRsqrt, Opcode::kSin,
                          Opcode::kSqrt, Opcode::kTan, Opcode::kTanh, Opcode::kAcos,
                          Opcode::kAcosh, Opcode::kAsin, Opcode::kAsinh, Opcode::kAtanh,
                          Opcode::kCosh, Opcode::kErf, Opcode::kSinh});
}

}  // namespace sharc::codegen
