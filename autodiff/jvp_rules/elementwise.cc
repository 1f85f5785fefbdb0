// JVP rules of the elementwise ops. Each derivative factor that depends only
// on primal values is computed in the primal computation and read by the
// tangent computation as a residual, so linearizing keeps the tangent program
// linear: tangent = sum over operands of residual * operand tangent.
#include "absl/status/statusor.h"
#include "autodiff/jvp_rule.h"
#include "autodiff/linearizer.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::autodiff {
namespace {

// t * factor, where factor was computed in the primal computation.
Instruction* Times(JvpContext& ctx, Instruction* t, Instruction* primal_factor) {
  return Mul(ctx.tangent(), t, ctx.Residual(primal_factor));
}

// d/dx of each unary op as a primal-side factor of (x, y = f(x)).
using FactorFn = Instruction* (*)(Emitter& p, Instruction* x, Instruction* y);

void RegisterUnary(JvpRuleRegistry& r, Opcode opcode, FactorFn factor) {
  r.Register(opcode, [factor](const Instruction&, const JvpArgs& a,
                              JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    return Times(ctx, a.tangents[0], factor(ctx.primal(), a.primals[0], a.result));
  });
}

// Linear elementwise ops: the same op on the tangents.
void RegisterLinear(JvpRuleRegistry& r, Opcode opcode) {
  r.Register(opcode, [opcode](const Instruction& inst, const JvpArgs& a,
                              JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    std::vector<Instruction*> ts;
    for (int64_t i = 0; i < inst.operand_count(); ++i) ts.push_back(a.TangentOrZeros(ctx, i));
    return ctx.tangent().Add(opcode, inst.shape(), std::move(ts));
  });
}

Instruction* One(Emitter& p, Instruction* like) { return Full(p, like->shape(), 1.0); }

}  // namespace

void RegisterElementwiseJvpRules(JvpRuleRegistry& r) {
  // |x|' = sign(x); for complex z, d|z| = real(dz conj(z) / |z|) with |z|
  // replaced by 1 where it is 0 (JAX's _abs_jvp_rule). Not conj(sign(z)),
  // although equal: sign has a zero derivative, and the factor's own
  // derivative is needed by second-order derivatives.
  r.Register(Opcode::kAbs, [](const Instruction&, const JvpArgs& a,
                              JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Emitter& p = ctx.primal();
    Instruction* x = a.primals[0];
    if (!hlo::IsComplex(x->shape().type())) {
      return Times(ctx, a.tangents[0], Unary(p, Opcode::kSign, x));
    }
    Instruction* magnitude = a.result;
    Instruction* safe = Select(p, Cmp(p, magnitude, Full(p, magnitude->shape(), 0.0), "EQ"),
                               Full(p, magnitude->shape(), 1.0), magnitude);
    Instruction* factor = Div(p, Conj(p, x), Convert(p, safe, x->shape().type()));
    return RealPart(ctx.tangent(), Times(ctx, a.tangents[0], factor));
  });
  // acos' = -1 / sqrt(1 - x^2), asin' = 1 / sqrt(1 - x^2).
  RegisterUnary(r, Opcode::kAcos, [](Emitter& p, Instruction* x, Instruction*) {
    return Neg(p, Unary(p, Opcode::kRsqrt, Sub(p, One(p, x), Mul(p, x, x))));
  });
  RegisterUnary(r, Opcode::kAsin, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kRsqrt, Sub(p, One(p, x), Mul(p, x, x)));
  });
  // acosh' = 1 / sqrt(x^2 - 1), asinh' = 1 / sqrt(x^2 + 1).
  RegisterUnary(r, Opcode::kAcosh, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kRsqrt, Sub(p, Mul(p, x, x), One(p, x)));
  });
  RegisterUnary(r, Opcode::kAsinh, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kRsqrt, Add(p, Mul(p, x, x), One(p, x)));
  });
  // atanh' = 1 / (1 - x^2).
  RegisterUnary(r, Opcode::kAtanh, [](Emitter& p, Instruction* x, Instruction*) {
    return Div(p, One(p, x), Sub(p, One(p, x), Mul(p, x, x)));
  });
  RegisterUnary(r, Opcode::kCosh, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kSinh, x);
  });
  RegisterUnary(r, Opcode::kSinh, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kCosh, x);
  });
  // erf' = 2 / sqrt(pi) * exp(-x^2).
  RegisterUnary(r, Opcode::kErf, [](Emitter& p, Instruction* x, Instruction*) {
    return Scale(p, Unary(p, Opcode::kExp, Neg(p, Mul(p, x, x))), 1.1283791670955126);
  });
  // reduce-precision is treated as linear, as JAX does: the tangent is
  // rounded the same way.
  r.Register(Opcode::kReducePrecision, [](const Instruction& inst, const JvpArgs& a,
                                          JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    return ctx.tangent().Add(Opcode::kReducePrecision, inst.shape(), {a.tangents[0]},
                             inst.attributes());
  });
  // cbrt' = 1 / (3 y^2).
  RegisterUnary(r, Opcode::kCbrt, [](Emitter& p, Instruction* x, Instruction* y) {
    return Div(p, One(p, x), Scale(p, Mul(p, y, y), 3.0));
  });
  RegisterUnary(r, Opcode::kCos, [](Emitter& p, Instruction* x, Instruction*) {
    return Neg(p, Unary(p, Opcode::kSin, x));
  });
  RegisterUnary(r, Opcode::kExp, [](Emitter&, Instruction*, Instruction* y) { return y; });
  RegisterUnary(r, Opcode::kExpm1, [](Emitter& p, Instruction* x, Instruction* y) {
    return Add(p, y, One(p, x));
  });
  RegisterUnary(r, Opcode::kLog, [](Emitter& p, Instruction* x, Instruction*) {
    return Div(p, One(p, x), x);
  });
  RegisterUnary(r, Opcode::kLog1p, [](Emitter& p, Instruction* x, Instruction*) {
    return Div(p, One(p, x), Add(p, x, One(p, x)));
  });
  RegisterUnary(r, Opcode::kLogistic, [](Emitter& p, Instruction* x, Instruction* y) {
    return Mul(p, y, Sub(p, One(p, x), y));
  });
  // rsqrt' = -y^3 / 2.
  RegisterUnary(r, Opcode::kRsqrt, [](Emitter& p, Instruction*, Instruction* y) {
    return Scale(p, Mul(p, y, Mul(p, y, y)), -0.5);
  });
  RegisterUnary(r, Opcode::kSin, [](Emitter& p, Instruction* x, Instruction*) {
    return Unary(p, Opcode::kCos, x);
  });
  RegisterUnary(r, Opcode::kSqrt, [](Emitter& p, Instruction* x, Instruction* y) {
    return Div(p, One(p, x), Scale(p, y, 2.0));
  });
  RegisterUnary(r, Opcode::kTan, [](Emitter& p, Instruction* x, Instruction* y) {
    return Add(p, One(p, x), Mul(p, y, y));
  });
  RegisterUnary(r, Opcode::kTanh, [](Emitter& p, Instruction* x, Instruction* y) {
    return Sub(p, One(p, x), Mul(p, y, y));
  });

  // complex(x, y), real(z) and imag(z) are linear over the reals: the same
  // op on the tangents (JAX's real_p, imag_p and complex_p).
  for (Opcode op : {Opcode::kNegate, Opcode::kCopy, Opcode::kComplex, Opcode::kReal,
                    Opcode::kImag}) {
    RegisterLinear(r, op);
  }
  // Sums skip zero tangents rather than adding explicit zeros.
  for (Opcode op : {Opcode::kAdd, Opcode::kSubtract}) {
    r.Register(op, [op](const Instruction& inst, const JvpArgs& a,
                        JvpContext& ctx) -> absl::StatusOr<Instruction*> {
      Instruction* ta = a.tangents[0];
      Instruction* tb = a.tangents[1];
      if (tb == nullptr) return ta;
      if (ta == nullptr) return op == Opcode::kAdd ? tb : Neg(ctx.tangent(), tb);
      return Binary(ctx.tangent(), op, ta, tb);
    });
  }
  // Rounding, sign and every op on (or to) integers and preds: derivative 0
  // wherever it exists.
  for (Opcode op : {Opcode::kClz, Opcode::kPopcnt, Opcode::kCeil, Opcode::kFloor, Opcode::kRoundNearestAfz,
                    Opcode::kRoundNearestEven, Opcode::kSign, Opcode::kIsFinite, Opcode::kNot,
                    Opcode::kAnd, Opcode::kOr, Opcode::kXor, Opcode::kShiftLeft,
                    Opcode::kShiftRightArithmetic, Opcode::kShiftRightLogical,
                    Opcode::kCompare}) {
    r.RegisterZeroDerivative(op);
  }

  r.Register(Opcode::kConvert, [](const Instruction& inst, const JvpArgs& a,
                                  JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    if (!IsDifferentiableType(inst.shape().type())) return nullptr;
    return Convert(ctx.tangent(), a.tangents[0], inst.shape().type());
  });

  // d(a*b) = ta*b + a*tb.
  r.Register(Opcode::kMultiply, [](const Instruction&, const JvpArgs& a,
                                   JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Instruction* out = nullptr;
    if (a.tangents[0] != nullptr) out = Times(ctx, a.tangents[0], a.primals[1]);
    if (a.tangents[1] != nullptr) {
      Instruction* term = Times(ctx, a.tangents[1], a.primals[0]);
      out = out == nullptr ? term : Add(ctx.tangent(), out, term);
    }
    return out;
  });
  // d(a/b) = ta/b - tb*(y/b).
  r.Register(Opcode::kDivide, [](const Instruction&, const JvpArgs& a,
                                 JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Emitter& t = ctx.tangent();
    Instruction* out = nullptr;
    if (a.tangents[0] != nullptr) {
      out = Div(t, a.tangents[0], ctx.Residual(a.primals[1]));
    }
    if (a.tangents[1] != nullptr) {
      Instruction* factor = Div(ctx.primal(), a.result, a.primals[1]);
      Instruction* term = Neg(t, Times(ctx, a.tangents[1], factor));
      out = out == nullptr ? term : Add(t, out, term);
    }
    return out;
  });
  // d atan2(a, b) = (ta*b - tb*a) / (a^2 + b^2).
  r.Register(Opcode::kAtan2, [](const Instruction&, const JvpArgs& a,
                                JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Emitter& p = ctx.primal();
    Instruction* denom = Add(p, Mul(p, a.primals[0], a.primals[0]),
                             Mul(p, a.primals[1], a.primals[1]));
    Instruction* out = nullptr;
    if (a.tangents[0] != nullptr) out = Times(ctx, a.tangents[0], Div(p, a.primals[1], denom));
    if (a.tangents[1] != nullptr) {
      Instruction* term = Times(ctx, a.tangents[1], Neg(p, Div(p, a.primals[0], denom)));
      out = out == nullptr ? term : Add(ctx.tangent(), out, term);
    }
    return out;
  });
  // d a^b = ta * b a^(b-1) + tb * log(a) y (the log term is 0 where y is).
  r.Register(Opcode::kPower, [](const Instruction&, const JvpArgs& a,
                                JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    Emitter& p = ctx.primal();
    Instruction* x = a.primals[0];
    Instruction* b = a.primals[1];
    Instruction* out = nullptr;
    if (a.tangents[0] != nullptr) {
      Instruction* pow = Binary(p, Opcode::kPower, x, Sub(p, b, One(p, b)));
      out = Times(ctx, a.tangents[0], Mul(p, b, pow));
    }
    if (a.tangents[1] != nullptr) {
      Instruction* zero = Full(p, x->shape(), 0.0);
      Instruction* safe = Select(p, Cmp(p, a.result, zero, "EQ"), zero,
                                 Mul(p, Unary(p, Opcode::kLog, x), a.result));
      Instruction* term = Times(ctx, a.tangents[1], safe);
      out = out == nullptr ? term : Add(ctx.tangent(), out, term);
    }
    return out;
  });
  // remainder(a, b) = a - trunc(a/b) b.
  r.Register(Opcode::kRemainder, [](const Instruction& inst, const JvpArgs& a,
                                    JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    if (!hlo::IsFloatingPoint(inst.shape().type())) return nullptr;
    Emitter& p = ctx.primal();
    Instruction* out = a.tangents[0];
    if (a.tangents[1] != nullptr) {
      Instruction* q = Div(p, a.primals[0], a.primals[1]);
      Instruction* trunc =
          Mul(p, Unary(p, Opcode::kSign, q), Unary(p, Opcode::kFloor, Unary(p, Opcode::kAbs, q)));
      Instruction* term = Times(ctx, a.tangents[1], Neg(p, trunc));
      out = out == nullptr ? term : Add(ctx.tangent(), out, term);
    }
    return out;
  });
  // max/min: the tangent of the chosen operand; ties split evenly (as JAX).
  for (Opcode op : {Opcode::kMaximum, Opcode::kMinimum}) {
    r.Register(op, [op](const Instruction& inst, const JvpArgs& a,
                        JvpContext& ctx) -> absl::StatusOr<Instruction*> {
      if (!hlo::IsFloatingPoint(inst.shape().type())) return nullptr;
      Emitter& p = ctx.primal();
      const char* wins = op == Opcode::kMaximum ? "GT" : "LT";
      Instruction* a_wins = Cmp(p, a.primals[0], a.primals[1], wins);
      Instruction* tie = Cmp(p, a.primals[0], a.primals[1], "EQ");
      Instruction* zero = Full(p, inst.shape(), 0.0);
      Instruction* half = Full(p, inst.shape(), 0.5);
      Instruction* one = Full(p, inst.shape(), 1.0);
      Instruction* weight_a = Select(p, tie, half, Select(p, a_wins, one, zero));
      Instruction* weight_b = Sub(p, one, weight_a);
      Instruction* out = nullptr;
      if (a.tangents[0] != nullptr) out = Times(ctx, a.tangents[0], weight_a);
      if (a.tangents[1] != nullptr) {
        Instruction* term = Times(ctx, a.tangents[1], weight_b);
        out = out == nullptr ? term : Add(ctx.tangent(), out, term);
      }
      return out;
    });
  }
  // select(p, a, b): the predicate is a residual, the choice linear.
  r.Register(Opcode::kSelect, [](const Instruction& inst, const JvpArgs& a,
                                 JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    return Select(ctx.tangent(), ctx.Residual(a.primals[0]), a.TangentOrZeros(ctx, 1),
                  a.TangentOrZeros(ctx, 2));
  });
  // clamp(lo, x, hi) = select(x < lo, lo, select(x > hi, hi, x)).
  r.Register(Opcode::kClamp, [](const Instruction& inst, const JvpArgs& a,
                                JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    if (!hlo::IsFloatingPoint(inst.shape().type())) return nullptr;
    Emitter& p = ctx.primal();
    Emitter& t = ctx.tangent();
    const Shape& shape = inst.shape();
    auto full = [&](Instruction* v) {
      return v->shape() == shape ? v : BroadcastInDim(p, v, shape, {});
    };
    auto full_t = [&](int64_t i) {
      Instruction* v = a.TangentOrZeros(ctx, i);
      return v->shape() == shape ? v : BroadcastInDim(t, v, shape, {});
    };
    Instruction* x = a.primals[1];
    Instruction* below = ctx.Residual(Cmp(p, x, full(a.primals[0]), "LT"));
    Instruction* above = ctx.Residual(Cmp(p, x, full(a.primals[2]), "GT"));
    return Select(t, below, full_t(0), Select(t, above, full_t(2), full_t(1)));
  });
}

}  // namespace sharc::autodiff
