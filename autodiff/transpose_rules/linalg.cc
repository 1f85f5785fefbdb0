// triangular-solve is linear in b (x = op(a)^-1 b): its cotangent flows back
// through the transposed solve, op(a)^-T ct (left) or ct op(a)^-T (right),
// as JAX's _triangular_solve_transpose_rule has it (a transpose, not an
// adjoint: JAX pairs cotangents without conjugation). op(a)^T is a when op
// is TRANSPOSE, conj(a) when it is ADJOINT, and a^T when it is NO_TRANSPOSE.
//
//   %x = triangular-solve(%a, %b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
//   ->  %ct_b = triangular-solve(%a, %ct), left_side=true, lower=true, transpose_a=TRANSPOSE
//
// cholesky is not linear in anything.
#include "autodiff/linalg_formulas.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {

void RegisterLinalgTransposeRules(TransposeRuleRegistry& r) {
  r.RegisterNotLinear(Opcode::kCholesky);
  r.Register(Opcode::kTriangularSolve,
             [](const Instruction& inst, const Cotangent& ct,
                TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
               if (ctx.IsLinear(inst.operand(0))) {
                 return hlo::OpError(inst, "cannot be transposed: it is not linear in a");
               }
               std::vector<Cotangent> out = NoCotangents(inst);
               if (ct.zero()) return out;
               ASSIGN_OR_RETURN(Instruction * a, ctx.Primal(inst.operand(0)));
               const std::string op = inst.has_attr("transpose_a")
                                          ? inst.attr_string("transpose_a")
                                          : "NO_TRANSPOSE";
               const bool transposed = op != "NO_TRANSPOSE";
               Emitter& e = ctx.emitter();
               if (op == "ADJOINT" && hlo::IsComplex(a->shape().type())) a = Conj(e, a);
               out[1] = Cotangent::Of(TriangularSolveLike(
                   e, inst, a, ctx.Materialize(ct, inst.shape()),
                   transposed ? "NO_TRANSPOSE" : "TRANSPOSE"));
               return out;
             });
}

}  // namespace sharc::autodiff
