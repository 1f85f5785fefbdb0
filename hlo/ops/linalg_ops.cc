// Linear algebra XLA has as ops, with their reference evaluators (the
// arithmetic is in hlo/eval/linalg_kernels.h and hlo/eval/complex_values.h):
//
//   cholesky(a), lower=b                 a: [..., n, n] -> same shape
//   triangular-solve(a, b), left_side=, lower=, unit_diagonal=, transpose_a=
//                                        a: [..., m, m], b: [..., m, k] (left) or [..., k, m]
//                                        -> b's shape
//   fft(x), fft_type=FFT|IFFT|RFFT|IRFFT, fft_length={...}
//                                        over the last len(fft_length) dims
#include <complex>
#include <type_traits>
#include <string>

#include "absl/strings/str_join.h"

#include "hlo/base/status_macros.h"
#include "hlo/eval/complex_values.h"
#include "hlo/eval/linalg_kernels.h"
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

// Matrix `batch` of the [..., rows, cols] array `literal`, in double (or
// complex<double> for c64/c128). Batch dims lead, so a matrix is contiguous.
template <typename Scalar>
std::vector<Scalar> LoadMatrix(const Literal& literal, int64_t batch, int64_t size) {
  std::vector<Scalar> m(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const int64_t at = batch * size + i;
    if constexpr (std::is_same_v<Scalar, double>) {
      m[i] = literal.GetAsDouble(at);
    } else {
      m[i] = GetComplex(literal, at);
    }
  }
  return m;
}

template <typename Scalar>
void StoreMatrix(const std::vector<Scalar>& m, int64_t batch, Literal& literal) {
  const int64_t size = static_cast<int64_t>(m.size());
  for (int64_t i = 0; i < size; ++i) {
    const int64_t at = batch * size + i;
    if constexpr (std::is_same_v<Scalar, double>) {
      literal.SetFromDouble(at, m[i]);
    } else {
      SetComplex(literal, at, m[i]);
    }
  }
}

// Number of matrices in a [..., rows, cols] shape.
int64_t BatchCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) count *= shape.dim(d);
  return count;
}

template <typename Scalar>
Literal CholeskyEach(const Instruction& inst, const Literal& a) {
  Literal result(a.shape());
  const int64_t n = a.shape().dim(a.shape().rank() - 1);
  for (int64_t b = 0; b < BatchCount(a.shape()); ++b) {
    StoreMatrix(CholeskyFactor(LoadMatrix<Scalar>(a, b, n * n), n, inst.attr_bool("lower")), b,
                result);
  }
  return result;
}

absl::StatusOr<Literal> EvaluateCholesky(const Instruction& inst,
                                         absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferCholesky(inst));
  if (IsComplex(shape.type())) return CholeskyEach<std::complex<double>>(inst, *operands[0]);
  return CholeskyEach<double>(inst, *operands[0]);
}

TriangularSolveFlags SolveFlags(const Instruction& inst) {
  TriangularSolveFlags flags;
  flags.left_side = inst.attr_bool("left_side");
  flags.lower = inst.attr_bool("lower");
  flags.unit_diagonal = inst.attr_bool("unit_diagonal");
  const std::string transpose =
      inst.has_attr("transpose_a") ? inst.attr_string("transpose_a") : "NO_TRANSPOSE";
  flags.transpose = transpose == "TRANSPOSE" ? TriangularTranspose::kTranspose
                    : transpose == "ADJOINT" ? TriangularTranspose::kAdjoint
                                             : TriangularTranspose::kNone;
  return flags;
}

template <typename Scalar>
Literal SolveEach(const Instruction& inst, const Literal& a, const Literal& b) {
  Literal result(b.shape());
  const TriangularSolveFlags flags = SolveFlags(inst);
  const int64_t r = a.shape().rank();
  const int64_t m = a.shape().dim(r - 1);
  const int64_t k = flags.left_side ? b.shape().dim(r - 1) : b.shape().dim(r - 2);
  for (int64_t i = 0; i < BatchCount(a.shape()); ++i) {
    StoreMatrix(SolveTriangular(LoadMatrix<Scalar>(a, i, m * m), LoadMatrix<Scalar>(b, i, m * k),
                                m, k, flags),
                i, result);
  }
  return result;
}

absl::StatusOr<Literal> EvaluateTriangularSolve(const Instruction& inst,
                                                absl::Span<const Literal* const> operands,
                                                EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferTriangularSolve(inst));
  if (IsComplex(shape.type())) {
    return SolveEach<std::complex<double>>(inst, *operands[0], *operands[1]);
  }
  return SolveEach<double>(inst, *operands[0], *operands[1]);
}

absl::StatusOr<Literal> EvaluateFft(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferFft(inst));
  Literal result(shape);
  FourierTransform(*operands[0], inst.attr_string("fft_type"), inst.attr_ints("fft_length"),
                   result);
  return result;
}

void Add(OpRegistry& registry, Opcode opcode, int operands, std::vector<AttrSpec> attrs,
         InferShapeFn infer, EvaluateFn evaluate) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = operands;
  def.max_operands = operands;
  def.attributes = std::move(attrs);
  def.infer_shape = std::move(infer);
  def.evaluate = std::move(evaluate);
  registry.Register(std::move(def));
}

}  // namespace

void RegisterLinalgOps(OpRegistry& registry) {
  Add(registry, Opcode::kCholesky, 1, {{"lower", AttrKind::kBool}}, InferCholesky,
      EvaluateCholesky);
  Add(registry, Opcode::kTriangularSolve, 2,
      {{"left_side", AttrKind::kBool},
       {"lower", AttrKind::kBool},
       {"unit_diagonal", AttrKind::kBool},
       {"transpose_a", AttrKind::kEnum}},
      InferTriangularSolve, EvaluateTriangularSolve);
  Add(registry, Opcode::kFft, 1,
      {{"fft_type", AttrKind::kEnum, /*required=*/true},
       {"fft_length", AttrKind::kIntList, /*required=*/true}},
      InferFft, EvaluateFft);
}

}  // namespace sharc::hlo
