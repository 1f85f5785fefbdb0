#include "autodiff/linalg_formulas.h"

#include <numeric>

namespace sharc::autodiff {

Instruction* KeepTriangle(Emitter& e, Instruction* x, bool lower, bool keep_diagonal) {
  const Shape& shape = x->shape();
  const int64_t r = shape.rank();
  const Shape index_shape(PrimitiveType::kS32, shape.dims());
  Instruction* row = e.Add(Opcode::kIota, index_shape, {}, {{"iota_dimension", r - 2}});
  Instruction* col = e.Add(Opcode::kIota, index_shape, {}, {{"iota_dimension", r - 1}});
  const char* direction = lower ? (keep_diagonal ? "GE" : "GT") : (keep_diagonal ? "LE" : "LT");
  return Select(e, Cmp(e, row, col, direction), x, Zeros(e, shape));
}

Instruction* SwapMatrixDims(Emitter& e, Instruction* x) {
  const int64_t r = x->shape().rank();
  IntList perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
  return Transpose(e, x, perm);
}

Instruction* AdjointMatrix(Emitter& e, Instruction* x) {
  Instruction* swapped = SwapMatrixDims(e, x);
  return hlo::IsComplex(x->shape().type()) ? Conj(e, swapped) : swapped;
}

Instruction* BatchMatmul(Emitter& e, Instruction* a, Instruction* b) {
  const int64_t r = a->shape().rank();
  IntList batch(static_cast<size_t>(r - 2));
  std::iota(batch.begin(), batch.end(), 0);
  std::vector<int64_t> dims(a->shape().dims().begin(), a->shape().dims().end() - 1);
  dims.push_back(b->shape().dim(r - 1));
  std::vector<hlo::Attribute> attrs = {{"lhs_contracting_dims", IntList{r - 1}},
                                       {"rhs_contracting_dims", IntList{r - 2}}};
  if (!batch.empty()) {
    attrs.push_back({"lhs_batch_dims", batch});
    attrs.push_back({"rhs_batch_dims", batch});
  }
  return e.Add(Opcode::kDot, Shape(a->shape().type(), dims), {a, b}, std::move(attrs));
}

Instruction* TriangularSolveLike(Emitter& e, const Instruction& like, Instruction* a,
                                 Instruction* b, const std::string& transpose_a) {
  return e.Add(Opcode::kTriangularSolve, b->shape(), {a, b},
               {{"left_side", like.attr_bool("left_side")},
                {"lower", like.attr_bool("lower")},
                {"unit_diagonal", like.attr_bool("unit_diagonal")},
                {"transpose_a", transpose_a}});
}

}  // namespace sharc::autodiff
