#include "codegen/vector_math.h"

#include <initializer_list>

namespace sharc::codegen {

using Halide::Expr;

namespace {

// c[0] x^n + c[1] x^(n-1) + ... + c[n], by Horner's rule (each step an FMA
// once LLVM contracts it).
Expr Horner(const Expr& x, std::initializer_list<double> coefficients) {
  auto c = [&](double v) { return Halide::Internal::make_const(x.type(), v); };
  Expr p;
  for (double k : coefficients) p = p.defined() ? p * x + c(k) : c(k);
  return p;
}

}  // namespace

// tanh as the rational minimax approximation XLA's CPU and GPU backends use
// for f32 (odd degree-13 numerator over even degree-6 denominator; Eigen's
// coefficients). It is all multiplies and adds plus one division, about
// half the work of an exp-based form, which matters because a tanh chain
// must keep up with memory bandwidth.
// - The numerator's constant term is the denominator's (Eigen's differ by
//   1.3e-7 relative), so the ratio is exactly 1 for tiny |z|, and z times
//   it is z: -0, subnormals and tiny inputs come out exact with no select
//   of their own (Eigen selects z below 4e-4).
// - z is clamped to [-9.1, 9.1], where f32 tanh rounds to +-1; the rational
//   stays within 2.4e-8 of tanh up to there (under half an ulp of 1; it is
//   fit on [0, 7.905]) and is 1 - 1.4e-9 at 9.1, which rounds to 1.
//   Evaluated in f32 it overshoots 1 by an ulp at some inputs near 9, so
//   the result is clamped to [-1, 1].
// - The rational is odd as evaluated (x^2 loses the sign, x gives it back),
//   so z's sign needs no handling: two clamps of two instructions each
//   (a vminps and a vmaxps) do what an abs, a clamp, a cap and two bit
//   operations for the sign did, one instruction fewer.
// - Selects keep their input on the false side (a > c ? c : a), so NaN
//   passes through: Halide's simplifier may rewrite a comparison as the
//   negation of its opposite (a >= b as !(a < b)), true for NaN. This also
//   relies on the pipeline's StrictFloat target: without it Halide turns
//   such a select into min/max, which return the constant for NaN. LLVM
//   still makes each select one vminps or vmaxps, whose x86 semantics (the
//   second operand when either is NaN) are exactly the select's.
// Max error 5 ulp (simulated over every 37th float below 10; the unit test
// sweeps more). Against the form with a tiny-input select, a sign select
// and a NaN test, the tail after the ratio fell from 11 instructions to 5
// (now 3: the multiply by x and the result's clamp): on AVX2 (Zen 3) tanh
// over 64K floats went from 0.044-0.046 to
// 0.036-0.038 ms. Estrin's scheme for the numerator (half the dependent
// FMAs) was no faster there.
Expr VectorTanh(const Expr& z) {
  Halide::Type ty = z.type();
  auto c = [&](double v) { return Halide::Internal::make_const(ty, v); };
  auto clamp = [&](const Expr& v, double bound) {
    Expr below = Halide::select(v > c(bound), c(bound), v);
    return Halide::select(below < c(-bound), c(-bound), below);
  };
  Expr x = clamp(z, 9.1);
  Expr x2 = x * x;
  Expr p = Horner(x2, {-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                       5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                       4.89352518554385e-03});
  Expr q = Horner(x2, {1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                       4.89352518554385e-03});
  return clamp(x * (p / q), 1.0);
}

// exp(x) = 2^(k-1) * 2 exp(r), r = x - k ln2 in [-ln2/2, ln2/2], with
// k = round(x / ln2) found by adding 1.5 * 2^23 plus the exponent bias: the
// sum's rounding to an integer is the rounding wanted, its low mantissa
// bits are k + bias, and shifting them into the exponent field gives the
// power of two with no float-to-int conversion and no integer add.
// Rounding (one FMA) rather than flooring (a subtraction of ln2/2 first)
// puts k = 128 below ln(FLT_MAX), so the power is 2^(k-1), always a float
// where exp(x) is finite, and the 2 goes into the polynomial's
// coefficients; above ln(FLT_MAX) the product overflows to +inf, which is
// the answer. The kernel only adds, multiplies, shifts and selects: with
// AVX2, 22 vector instructions per 8 floats (the load folded in), of which
// 6 serve subnormal results and 2 the lanes that round to zero (below);
// the non-positive form takes 16 (objdump of the cached kernels).
// The kernel relies on the pipeline's StrictFloat target: Halide would
// otherwise simplify (a + 1.5 * 2^23) - 1.5 * 2^23 to a.
namespace {

// The part both exp forms share, for an x already clamped to [-131.7, 89]
// (|k| <= 190):
// the sum t whose low mantissa bits hold k + bias_exponent, k, and
// p = 2 exp(r) * scale.
struct ExpReduction {
  Expr t;
  Expr k;
  Expr p;
};

// The bias rides in the rounding constant (1.5 * 2^23 + bias is still an
// integer below 2^24, so t keeps an ulp of 1), which saves the integer add
// that would otherwise put it into the exponent field. It cannot change k:
// with the FMA, the sum's exact value is never halfway between integers for
// |x| <= 104 (f32(log2 e)'s significand is odd, so x * f32(log2 e) is a
// half-integer only if |x| >= 2^22), and without it (a rounded product,
// then the add) the bias is even (126 or 190), and adding an even integer
// does not change how a tie rounds to even.
// `scale` is a power of two multiplied into the polynomial's coefficients.
// Every Horner step is an FMA whose result stays normal, so p comes out as
// exactly scale times the unscaled polynomial: scaling by 2 or 2^-64 there
// is free, where a multiply of the final result would cost an instruction.
ExpReduction ReduceExp(const Expr& xc, uint32_t bias_exponent, double scale) {
  auto c = [&](double v) { return Halide::Internal::make_const(xc.type(), v); };
  const double kRounding = 12582912.0 + bias_exponent;  // 1.5 * 2^23 + bias
  Expr t = xc * c(1.44269504088896341) + c(kRounding);
  Expr k = t - c(kRounding);  // an integer, exactly
  // Cody-Waite: ln2 in two parts, the first with 8 trailing zero bits so
  // that k * part is exact for |k| < 256.
  Expr r = (xc - k * c(0.693145751953125)) - k * c(1.42860682030941723212e-6);
  // Degree-6 fit of exp on [-ln2/2 - 0.01, ln2/2 + 0.01] with the constant
  // term 1 (weighted least squares on relative error: 2.4e-9 in exact
  // arithmetic; simulated in f32 over [-110, 95], every result within 1 ulp,
  // 8.5% of them off by one, against 13% for the earlier floor form's fit).
  Expr p = Horner(r, {scale * 0.0013840898055172688, scale * 0.008376520050603187,
                      scale * 0.04166816465994234, scale * 0.16666403382287287,
                      scale * 0.499999931272049, scale * 1.000000037962892, scale});
  return {t, k, p};
}

// 2^(k + bias_exponent - 127) as bits, from the t of ReduceExp(..,
// bias_exponent, ..): its low 9 bits are k + bias_exponent (mod 512),
// shifted into the exponent field (k + bias_exponent in [1, 254] gives a
// normal power of two; the bits shifted out are those of 1.5 * 2^23).
Expr PowerOfTwoBits(const Expr& t) {
  Halide::Type u32 = Halide::UInt(32, t.type().lanes());
  return Halide::reinterpret(u32, t) << Halide::Internal::make_const(u32, 23);
}

constexpr double kTwoToMinus64 = 5.42101086242752217e-20;

}  // namespace

Expr VectorExp(const Expr& x) {
  Halide::Type f32 = x.type();
  Halide::Type u32 = Halide::UInt(32, f32.lanes());
  auto c = [&](double v) { return Halide::Internal::make_const(f32, v); };
  auto u = [&](uint32_t v) { return Halide::Internal::make_const(u32, v); };
  // Beyond these, every result is +inf or rounds to +0. Written as selects
  // whose false side is x, so NaN passes through unchanged.
  Expr xc = Halide::select(x < c(-104.0), c(-104.0), x);
  xc = Halide::select(xc > c(89.0), c(89.0), xc);
  ExpReduction e = ReduceExp(xc, 126, 2.0);
  // 2^(k-1) from t's low bits (k in [-150, 128], so k - 1 <= 127). At
  // k = -126 the exponent field is 0 and below it the bits wrap (mod 512);
  // both take the subnormal path, whose added 64 brings them into range.
  Expr scale_bits = PowerOfTwoBits(e.t);
  // Below 2^-126 the power is subnormal: scale by 2^(k - 1 + 64), exactly,
  // and then by 2^-64, which rounds once. A multiply whose result
  // underflows costs a microcode assist on Intel cores, so the clamped
  // lanes (x <= -104, whose exp rounds to +0: a masked softmax's -inf) are
  // not scaled but set to +0; LLVM keeps the second multiply masked to the
  // others. Every x below -103.98 rounds to +0 (the threshold is
  // -103.9721). Not `xc <= -104`: the simplifier may turn that into
  // !(-104 < xc), which holds for NaN (see VectorTanh).
  Expr flushed = xc < c(-103.98);
  Expr subnormal = e.k < c(-125.0) && !flushed;
  scale_bits = Halide::select(subnormal, scale_bits + u(64u << 23), scale_bits);
  Expr result = e.p * Halide::reinterpret(f32, scale_bits);
  result = Halide::select(subnormal, result * c(kTwoToMinus64), result);
  return Halide::select(flushed, c(0.0), result);
}

// For x <= 0, k <= 0, so 2^(k - 1 + 64) is always a normal power of two:
// every lane takes VectorExp's subnormal path, which scales by that and
// then by 2^-64. Here the 2^-64 is in the polynomial's coefficients, so
// the one multiply by 2^(k - 1 + 64) rounds the same real number once: the
// same bits, one instruction less. Against the general form that leaves
// out the overflow clamp, the subnormal test, two selects, the integer add
// of 64 and the multiply by 2^-64. With kSelectZero the lanes that round to
// +0 get an input whose multiplies cannot underflow, then +0. With
// kScaleByZero x is clamped at -131.7, where k = -190: k + 190 = 0 leaves
// every bit of the power zero, so it is +0.0 and the multiply gives +0
// exactly, with no underflow (for every x below -131.35, where k = -190);
// above that k >= -189 and the power 2^(k + 63) is normal, and lanes up to
// -103.98 underflow to +0 in the multiply. Checked against kSelectZero over
// every non-positive float and NaN (a C model of both, fused and unfused):
// the same bits.
Expr VectorExpOfNonPositive(const Expr& x, ExpUnderflow underflow) {
  Halide::Type f32 = x.type();
  auto c = [&](double v) { return Halide::Internal::make_const(f32, v); };
  if (underflow == ExpUnderflow::kScaleByZero) {
    // NaN compares false and passes through.
    ExpReduction e = ReduceExp(Halide::select(x < c(-131.7), c(-131.7), x), 126 + 64,
                               2.0 * kTwoToMinus64);
    return e.p * Halide::reinterpret(f32, PowerOfTwoBits(e.t));
  }
  Expr flushed = x < c(-103.98);  // false for NaN, which passes through
  ExpReduction e =
      ReduceExp(Halide::select(flushed, c(-80.0), x), 126 + 64, 2.0 * kTwoToMinus64);
  Expr scaled = e.p * Halide::reinterpret(f32, PowerOfTwoBits(e.t));
  return Halide::select(flushed, c(0.0), scaled);
}

}  // namespace sharc::codegen
