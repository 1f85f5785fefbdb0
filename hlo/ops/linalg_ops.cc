// Linear algebra XLA has as ops, which sharc reads, verifies and partitions
// but has no evaluator for yet (OpDef::cannot_run says so when `run` meets
// one):
//
//   cholesky(a), lower=b                 a: [..., n, n] -> same shape
//   triangular-solve(a, b), left_side=, lower=, unit_diagonal=, transpose_a=
//                                        a: [..., m, m], b: [..., m, k] (left) or [..., k, m]
//                                        -> b's shape
//   fft(x), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...}
//                                        over the last len(fft_length) dims
#include <string>

#include "absl/strings/str_join.h"

#include "hlo/base/status_macros.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

bool IsFloatOrComplex(PrimitiveType t) { return IsFloatingPoint(t) || IsComplex(t); }

absl::StatusOr<Shape> InferCholesky(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& a = inst.operand(0)->shape();
  if (a.rank() < 2 || a.dim(a.rank() - 1) != a.dim(a.rank() - 2) || !IsFloatOrComplex(a.type())) {
    return OpError(inst, "needs square floating-point matrices [..., n, n], got ", a.ToString());
  }
  return a;
}

absl::StatusOr<Shape> InferTriangularSolve(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 1));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  const int64_t r = a.rank();
  if (r < 2 || b.rank() != r || a.type() != b.type() || !IsFloatOrComplex(a.type()) ||
      a.dim(r - 1) != a.dim(r - 2)) {
    return OpError(inst, "needs a square a [..., m, m] and b of its rank and type, got ",
                   a.ToString(), " and ", b.ToString());
  }
  for (int64_t d = 0; d < r - 2; ++d) {
    if (a.dim(d) != b.dim(d)) {
      return OpError(inst, "batch dimensions differ: ", a.ToString(), " and ", b.ToString());
    }
  }
  const int64_t m = inst.attr_bool("left_side") ? b.dim(r - 2) : b.dim(r - 1);
  if (a.dim(r - 1) != m) {
    return OpError(inst, "a is ", a.ToString(), " but b ", b.ToString(), " needs m = ", m);
  }
  if (inst.has_attr("transpose_a")) {
    const std::string& t = inst.attr_string("transpose_a");
    if (t != "NO_TRANSPOSE" && t != "TRANSPOSE" && t != "ADJOINT") {
      return OpError(inst, "has transpose_a=", t, "; expected NO_TRANSPOSE, TRANSPOSE or ADJOINT");
    }
  }
  return b;
}

absl::StatusOr<Shape> InferFft(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  const Shape& x = inst.operand(0)->shape();
  const IntList& lengths = inst.attr_ints("fft_length");
  const std::string& type = inst.attr_string("fft_type");
  const int64_t n = static_cast<int64_t>(lengths.size());
  if (n < 1 || n > 3 || n > x.rank()) {
    return OpError(inst, "needs 1 to 3 fft_length entries, at most the rank of ", x.ToString());
  }
  // The transformed dims are the last n; for IRFFT the last holds
  // fft_length/2+1 complex values.
  for (int64_t i = 0; i < n; ++i) {
    const bool last = i == n - 1;
    const int64_t expected = last && type == "IRFFT" ? lengths[i] / 2 + 1 : lengths[i];
    if (x.dim(x.rank() - n + i) != expected) {
      return OpError(inst, "operand ", x.ToString(), " does not match fft_length={",
                     absl::StrJoin(lengths, ","), "} for ", type);
    }
  }
  std::vector<int64_t> dims = x.dims();
  PrimitiveType out_type = x.type();
  const bool wide = x.type() == PrimitiveType::kF64 || x.type() == PrimitiveType::kC128;
  if (type == "FFT" || type == "IFFT") {
    if (!IsComplex(x.type())) return OpError(inst, type, " needs a complex operand");
  } else if (type == "RFFT") {
    if (x.type() != PrimitiveType::kF32 && x.type() != PrimitiveType::kF64) {
      return OpError(inst, "RFFT needs an f32 or f64 operand");
    }
    out_type = wide ? PrimitiveType::kC128 : PrimitiveType::kC64;
    dims.back() = lengths.back() / 2 + 1;
  } else if (type == "IRFFT") {
    if (!IsComplex(x.type())) return OpError(inst, "IRFFT needs a complex operand");
    out_type = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
    dims.back() = lengths.back();
  } else {
    return OpError(inst, "has fft_type=", type, "; expected FFT, IFFT, RFFT or IRFFT");
  }
  Shape inferred(out_type, dims);
  if (inst.shape().valid()) RETURN_IF_ERROR(ExpectDeclared(inst, inferred));
  return inferred;
}

void Add(OpRegistry& registry, Opcode opcode, int operands, std::vector<AttrSpec> attrs,
         InferShapeFn infer) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = operands;
  def.max_operands = operands;
  def.attributes = std::move(attrs);
  def.infer_shape = std::move(infer);
  def.cannot_run = "sharc has no evaluator for it yet";
  def.evaluate = CannotRunEvaluator();
  registry.Register(std::move(def));
}

}  // namespace

void RegisterLinalgOps(OpRegistry& registry) {
  Add(registry, Opcode::kCholesky, 1, {{"lower", AttrKind::kBool}}, InferCholesky);
  Add(registry, Opcode::kTriangularSolve, 2,
      {{"left_side", AttrKind::kBool},
       {"lower", AttrKind::kBool},
       {"unit_diagonal", AttrKind::kBool},
       {"transpose_a", AttrKind::kEnum}},
      InferTriangularSolve);
  Add(registry, Opcode::kFft, 1,
      {{"fft_type", AttrKind::kEnum, /*required=*/true},
       {"fft_length", AttrKind::kIntList, /*required=*/true}},
      InferFft);
}

}  // namespace sharc::hlo
