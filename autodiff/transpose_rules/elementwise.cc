// Transpose rules of the elementwise ops that can be linear: sums and
// differences, negation, scaling by a non-linear factor, select with a
// non-linear predicate, and type conversion between float types. Every other
// elementwise op is registered as not linear.
#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

absl::Status NotLinearIn(const Instruction& inst, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("cannot transpose ",
                                                 hlo::OpcodeName(inst.opcode()), ": ", what,
                                                 ", in ", inst.Describe()));
}

}  // namespace

void RegisterElementwiseTransposeRules(TransposeRuleRegistry& r) {
  r.Register(Opcode::kAdd, [](const Instruction& inst, const Cotangent& ct,
                              TransposeContext&) -> absl::StatusOr<std::vector<Cotangent>> {
    return std::vector<Cotangent>{ct, ct};
  });
  r.Register(Opcode::kSubtract, [](const Instruction& inst, const Cotangent& ct,
                                   TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    std::vector<Cotangent> out = {ct, {}};
    if (ctx.IsLinear(inst.operand(1))) out[1] = Cotangent::Of(Neg(ctx.emitter(), ct.value));
    return out;
  });
  r.Register(Opcode::kNegate, [](const Instruction&, const Cotangent& ct,
                                 TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    return std::vector<Cotangent>{Cotangent::Of(Neg(ctx.emitter(), ct.value))};
  });
  for (Opcode op : {Opcode::kCopy}) {
    r.Register(op, [](const Instruction&, const Cotangent& ct,
                      TransposeContext&) -> absl::StatusOr<std::vector<Cotangent>> {
      return std::vector<Cotangent>{ct};
    });
  }
  // reduce-precision is treated as linear, as JAX does: the cotangent is
  // rounded the same way the value was.
  r.Register(Opcode::kReducePrecision,
             [](const Instruction& inst, const Cotangent& ct,
                TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
               return std::vector<Cotangent>{Cotangent::Of(ctx.emitter().Add(
                   Opcode::kReducePrecision, ct.value->shape(), {ct.value}, inst.attributes()))};
             });
  r.Register(Opcode::kConvert, [](const Instruction& inst, const Cotangent& ct,
                                  TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    // A real converted to complex has the real part of the cotangent as
    // its own (JAX: complex cotangents pair with tangents by Re(ct t)).
    const PrimitiveType from = inst.operand(0)->shape().type();
    if (hlo::IsComplex(inst.shape().type()) && !hlo::IsComplex(from)) {
      return std::vector<Cotangent>{
          Cotangent::Of(Convert(ctx.emitter(), RealPart(ctx.emitter(), ct.value), from))};
    }
    return std::vector<Cotangent>{Cotangent::Of(Convert(ctx.emitter(), ct.value, from))};
  });
  r.Register(Opcode::kMultiply, [](const Instruction& inst, const Cotangent& ct,
                                   TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    const bool l0 = ctx.IsLinear(inst.operand(0));
    const bool l1 = ctx.IsLinear(inst.operand(1));
    if (l0 && l1) return NotLinearIn(inst, "both factors depend on the linear inputs");
    std::vector<Cotangent> out = NoCotangents(inst);
    const int64_t linear = l0 ? 0 : 1;
    ASSIGN_OR_RETURN(Instruction * factor, ctx.Primal(inst.operand(1 - linear)));
    out[static_cast<size_t>(linear)] = Cotangent::Of(Mul(ctx.emitter(), ct.value, factor));
    return out;
  });
  r.Register(Opcode::kDivide, [](const Instruction& inst, const Cotangent& ct,
                                 TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    if (ctx.IsLinear(inst.operand(1))) {
      return NotLinearIn(inst, "the divisor depends on the linear inputs");
    }
    ASSIGN_OR_RETURN(Instruction * divisor, ctx.Primal(inst.operand(1)));
    return std::vector<Cotangent>{Cotangent::Of(Div(ctx.emitter(), ct.value, divisor)), {}};
  });
  r.Register(Opcode::kSelect, [](const Instruction& inst, const Cotangent& ct,
                                 TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    if (ctx.IsLinear(inst.operand(0))) {
      return NotLinearIn(inst, "the predicate depends on the linear inputs");
    }
    ASSIGN_OR_RETURN(Instruction * pred, ctx.Primal(inst.operand(0)));
    Emitter& e = ctx.emitter();
    Instruction* zeros = Zeros(e, inst.shape());
    std::vector<Cotangent> out = NoCotangents(inst);
    if (ctx.IsLinear(inst.operand(1))) out[1] = Cotangent::Of(Select(e, pred, ct.value, zeros));
    if (ctx.IsLinear(inst.operand(2))) out[2] = Cotangent::Of(Select(e, pred, zeros, ct.value));
    return out;
  });
  for (Opcode op :
       {Opcode::kAbs, Opcode::kAcos, Opcode::kAcosh, Opcode::kAsin, Opcode::kAsinh, Opcode::kAtanh,
        Opcode::kClz, Opcode::kCosh, Opcode::kErf, Opcode::kPopcnt, Opcode::kSinh, Opcode::kCbrt, Opcode::kCeil, Opcode::kCos, Opcode::kExp, Opcode::kExpm1,
        Opcode::kFloor, Opcode::kIsFinite, Opcode::kLog, Opcode::kLog1p, Opcode::kLogistic,
        Opcode::kNot, Opcode::kRoundNearestAfz, Opcode::kRoundNearestEven, Opcode::kRsqrt,
        Opcode::kSign, Opcode::kSin, Opcode::kSqrt, Opcode::kTan, Opcode::kTanh, Opcode::kAnd,
        Opcode::kAtan2, Opcode::kClamp, Opcode::kCompare, Opcode::kMaximum, Opcode::kMinimum,
        Opcode::kOr, Opcode::kPower, Opcode::kRemainder, Opcode::kShiftLeft,
        Opcode::kShiftRightArithmetic, Opcode::kShiftRightLogical, Opcode::kXor,
        Opcode::kConstant, Opcode::kIota, Opcode::kParameter, Opcode::kPartitionId,
        Opcode::kReplicaId}) {
    r.RegisterNotLinear(op);
  }
}

}  // namespace sharc::autodiff
