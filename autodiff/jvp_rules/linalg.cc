// JVP rules of cholesky and triangular-solve, after JAX's
// (jax/_src/lax/linalg.py: _cholesky_jvp_rule, _triangular_solve_jvp_rule_a
// and the b rule), for real and complex element types; and fft's, which is
// linear.
//
// cholesky (lower): L = chol(A), A = L L^H, with A read from its lower
// triangle, so the tangent A sees is the Hermitian S = tril(dA) +
// tril(dA, -1)^H, and
//   dL = L phi(L^-1 S L^-H),  phi(X) = tril(X) with its diagonal halved
// (Murray, arXiv:1602.07527; ^H is ^T for reals). The upper case is the
// lower case of the transposes (XLA factors it that way).
//
// triangular-solve: x = op(a)^-1 b is linear in b, and in a
//   left:  dx = op(a)^-1 (-op(da') x),   right: dx = (x (-op(da'))) op(a)^-1
// where da' keeps the triangle of da that the op reads (without the
// diagonal when it is unit), and op transposes (TRANSPOSE) or conjugates
// and transposes (ADJOINT) as it does a.
#include "autodiff/jvp_rule.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "autodiff/linalg_formulas.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

absl::StatusOr<Instruction*> CholeskyJvp(const Instruction& inst, const JvpArgs& args,
                                         JvpContext& ctx) {
  if (args.tangents[0] == nullptr) return nullptr;
  Emitter& t = ctx.tangent();
  const bool lower = inst.attr_bool("lower");
  Instruction* factor = ctx.Residual(args.result);
  Instruction* l = lower ? factor : SwapMatrixDims(t, factor);
  Instruction* da = lower ? args.tangents[0] : SwapMatrixDims(t, args.tangents[0]);
  Instruction* s = Add(t, KeepTriangle(t, da, /*lower=*/true, /*keep_diagonal=*/true),
                       AdjointMatrix(t, KeepTriangle(t, da, true, /*keep_diagonal=*/false)));
  const char* adjoint = hlo::IsComplex(inst.shape().type()) ? "ADJOINT" : "TRANSPOSE";
  // Flags of a lower, non-unit solve by L (left or right, plain or transposed).
  auto solve = [&](Instruction* b, bool left_side, const char* transpose_a) {
    return t.Add(Opcode::kTriangularSolve, b->shape(), {l, b},
                 {{"left_side", left_side},
                  {"lower", true},
                  {"unit_diagonal", false},
                  {"transpose_a", std::string(transpose_a)}});
  };
  Instruction* inner = solve(solve(s, /*left_side=*/false, adjoint), true, "NO_TRANSPOSE");
  Instruction* phi =
      Add(t, KeepTriangle(t, inner, true, /*keep_diagonal=*/false),
          Scale(t, Sub(t, KeepTriangle(t, inner, true, true), KeepTriangle(t, inner, true, false)),
                0.5));
  Instruction* dl = BatchMatmul(t, l, phi);
  return lower ? dl : SwapMatrixDims(t, dl);
}

absl::StatusOr<Instruction*> TriangularSolveJvp(const Instruction& inst, const JvpArgs& args,
                                                JvpContext& ctx) {
  Emitter& t = ctx.tangent();
  const std::string transpose_a =
      inst.has_attr("transpose_a") ? inst.attr_string("transpose_a") : "NO_TRANSPOSE";
  Instruction* a = args.tangents[0] != nullptr || args.tangents[1] != nullptr
                       ? ctx.Residual(args.primals[0])
                       : nullptr;
  Instruction* out = nullptr;
  if (args.tangents[1] != nullptr) {
    out = TriangularSolveLike(t, inst, a, args.tangents[1], transpose_a);
  }
  if (args.tangents[0] != nullptr) {
    Instruction* da = Neg(t, KeepTriangle(t, args.tangents[0], inst.attr_bool("lower"),
                                          !inst.attr_bool("unit_diagonal")));
    if (transpose_a == "TRANSPOSE") da = SwapMatrixDims(t, da);
    if (transpose_a == "ADJOINT") da = AdjointMatrix(t, da);
    Instruction* x = ctx.Residual(args.result);
    Instruction* rhs = inst.attr_bool("left_side") ? BatchMatmul(t, da, x) : BatchMatmul(t, x, da);
    Instruction* term = TriangularSolveLike(t, inst, a, rhs, transpose_a);
    out = out == nullptr ? term : Add(t, out, term);
  }
  return out;
}

}  // namespace

void RegisterLinalgJvpRules(JvpRuleRegistry& r) {
  r.Register(Opcode::kCholesky, CholeskyJvp);
  r.Register(Opcode::kTriangularSolve, TriangularSolveJvp);
  // fft is linear (over the reals for RFFT and IRFFT): the same transform of
  // the tangent, as in JAX's fft JVP.
  r.Register(Opcode::kFft, LinearIn({}));
}

}  // namespace sharc::autodiff
