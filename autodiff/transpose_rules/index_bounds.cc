#include "autodiff/transpose_rules/index_bounds.h"

#include "hlo/ir/literal.h"
#include "hlo/ir/primitive_type.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::autodiff {

bool StartIndices::KnownInBounds() const {
  if (indices->opcode() != Opcode::kConstant) return false;
  const hlo::Literal& literal = indices->literal();
  const Shape& shape = indices->shape();
  // Element i's component along index_vector_dim.
  int64_t inner = 1;
  for (int64_t d = index_vector_dim + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t components = index_vector_dim < shape.rank() ? shape.dim(index_vector_dim) : 1;
  for (int64_t i = 0; i < literal.num_elements(); ++i) {
    const int64_t k = (i / inner) % components;
    const int64_t v = literal.GetAsInt64(i);
    // A u64 above INT64_MAX reads back negative: out of bounds too.
    if (v < 0 || v > upper[static_cast<size_t>(k)]) return false;
  }
  return true;
}

Instruction* StartIndices::Clamped(Emitter& e) const {
  if (KnownInBounds()) return indices;
  const Shape& shape = indices->shape();
  Instruction* limit = nullptr;
  if (index_vector_dim == shape.rank()) {
    limit = Full(e, shape, static_cast<double>(upper[0]));
  } else {
    hlo::Literal bounds(Shape(shape.type(), {static_cast<int64_t>(upper.size())}));
    for (size_t k = 0; k < upper.size(); ++k) {
      bounds.SetFromInt64(static_cast<int64_t>(k), upper[k]);
    }
    Instruction* row = e.Add(Instruction::CreateConstant("upper", std::move(bounds)));
    limit = BroadcastInDim(e, row, shape, {index_vector_dim});
  }
  return e.Add(Opcode::kClamp, shape, {Zeros(e, shape), indices, limit});
}

Instruction* StartIndices::InBounds(Emitter& e) const {
  const Shape& shape = indices->shape();
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d != index_vector_dim) batch_dims.push_back(shape.dim(d));
  }
  const Shape mask_shape(PrimitiveType::kPred, batch_dims);
  if (KnownInBounds()) return nullptr;
  Instruction* same = Cmp(e, Clamped(e), indices, "EQ");
  if (index_vector_dim == shape.rank()) return same;
  return e.Add(Opcode::kReduce, mask_shape, {same, ScalarOf(e, PrimitiveType::kPred, 1.0)},
               {{"dimensions", IntList{index_vector_dim}},
                {"to_apply", hlo::BinaryReducer(ModuleOf(e), Opcode::kAnd, PrimitiveType::kPred)}});
}

}  // namespace sharc::autodiff
