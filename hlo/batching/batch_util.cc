#include "hlo/batching/batch_util.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/scalar_reducer.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {

Shape BatchedShape(const Shape& shape, int64_t batch_size) {
  std::vector<int64_t> dims = {batch_size};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return Shape(shape.type(), std::move(dims));
}

IntList ShiftDims(absl::Span<const int64_t> dims, int64_t by) {
  IntList out;
  for (int64_t d : dims) out.push_back(d + by);
  return out;
}

IntList PrependZero(absl::Span<const int64_t> dims) {
  IntList out = {0};
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

IntList DimRange(int64_t start, int64_t count) {
  IntList out;
  for (int64_t i = 0; i < count; ++i) out.push_back(start + i);
  return out;
}

Instruction* Broadcast(Emitter& emitter, Instruction* operand, Shape shape, IntList dims) {
  return emitter.Add(Opcode::kBroadcast, std::move(shape), {operand},
                     {{"dimensions", std::move(dims)}});
}

Instruction* BroadcastToBatch(Emitter& emitter, Instruction* unbatched, int64_t batch_size) {
  const Shape& shape = unbatched->shape();
  return Broadcast(emitter, unbatched, BatchedShape(shape, batch_size), DimRange(1, shape.rank()));
}

Instruction* GetTupleElement(Emitter& emitter, Instruction* tuple, int64_t index) {
  return emitter.Add(Opcode::kGetTupleElement, tuple->shape().tuple_shape(index), {tuple},
                     {{"index", index}});
}

Instruction* MakeTuple(Emitter& emitter, std::vector<Instruction*> elements) {
  std::vector<Shape> shapes;
  for (const Instruction* e : elements) shapes.push_back(e->shape());
  return emitter.Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
}

absl::StatusOr<Instruction*> MaterializeAs(Emitter& emitter, const BatchedValue& value,
                                           const BatchTree& target, int64_t batch_size) {
  RET_CHECK(value.batched.IsSubsetOf(target))
      << value.batched.ToString() << " vs " << target.ToString();
  if (value.batched == target) return value.inst;
  if (!target.is_tuple()) return BroadcastToBatch(emitter, value.inst, batch_size);
  // Rebuild the tuple, broadcasting only the leaves that change.
  std::vector<Instruction*> elements;
  for (int64_t i = 0; i < static_cast<int64_t>(target.elements().size()); ++i) {
    BatchedValue element{GetTupleElement(emitter, value.inst, i), value.batched.element(i)};
    ASSIGN_OR_RETURN(Instruction * e,
                     MaterializeAs(emitter, element, target.element(i), batch_size));
    elements.push_back(e);
  }
  return MakeTuple(emitter, std::move(elements));
}

absl::StatusOr<Instruction*> Materialize(Emitter& emitter, const BatchedValue& value,
                                         int64_t batch_size) {
  return MaterializeAs(emitter, value, BatchTree::Uniform(value.inst->shape(), true), batch_size);
}

absl::StatusOr<std::vector<Instruction*>> MaterializeAll(Emitter& emitter,
                                                         absl::Span<const BatchedValue> values,
                                                         int64_t batch_size) {
  std::vector<Instruction*> out;
  for (const BatchedValue& v : values) {
    ASSIGN_OR_RETURN(Instruction * inst, Materialize(emitter, v, batch_size));
    out.push_back(inst);
  }
  return out;
}

Instruction* EmptyBatch(Emitter& emitter, const Shape& shape) {
  if (shape.is_tuple()) {
    std::vector<Instruction*> elements;
    for (const Shape& s : shape.tuple_shapes()) elements.push_back(EmptyBatch(emitter, s));
    return MakeTuple(emitter, std::move(elements));
  }
  return Broadcast(emitter, ScalarConstant(emitter, shape.type(), 0), BatchedShape(shape, 0), {});
}

Instruction* MoveDimToFront(Emitter& emitter, Instruction* inst, int64_t dim) {
  if (dim == 0) return inst;
  const Shape& shape = inst->shape();
  IntList perm = {dim};
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (d != dim) perm.push_back(d);
  }
  return Transpose(emitter, inst, std::move(perm));
}

Instruction* Transpose(Emitter& emitter, Instruction* x, IntList permutation) {
  bool identity = true;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < permutation.size(); ++i) {
    identity &= permutation[i] == static_cast<int64_t>(i);
    dims.push_back(x->shape().dim(permutation[i]));
  }
  if (identity) return x;
  return emitter.Add(Opcode::kTranspose, Shape(x->shape().type(), std::move(dims)), {x},
                     {{"dimensions", std::move(permutation)}});
}

Instruction* ReduceSum(Emitter& emitter, Instruction* x, IntList dims) {
  if (dims.empty()) return x;
  const Shape& shape = x->shape();
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(shape.dim(d));
  }
  Literal zero_literal(Shape::Scalar(shape.type()));
  zero_literal.SetFromDouble(0, 0.0);  // complex and narrow float types too
  Instruction* zero = emitter.Add(Instruction::CreateConstant("constant", std::move(zero_literal)));
  Computation* add = BinaryReducer(*emitter.computation()->parent(), Opcode::kAdd, shape.type());
  return emitter.Add(Opcode::kReduce, Shape(shape.type(), std::move(kept)), {x, zero},
                     {{"dimensions", std::move(dims)}, {"to_apply", add}});
}

Instruction* ScalarConstant(Emitter& emitter, PrimitiveType type, int64_t value) {
  Literal literal(Shape::Scalar(type));
  literal.SetFromInt64(0, value);
  return emitter.Add(Instruction::CreateConstant("constant", std::move(literal)));
}

Instruction* SelectLeaves(Emitter& e, Instruction* choose, Instruction* on_true,
                          Instruction* on_false) {
  const Shape& shape = on_true->shape();
  if (shape.is_tuple()) {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(
          SelectLeaves(e, choose, GetTupleElement(e, on_true, i), GetTupleElement(e, on_false, i)));
    }
    return MakeTuple(e, std::move(elements));
  }
  Shape mask_shape(PrimitiveType::kPred, shape.dims());
  Instruction* mask = choose;
  if (mask->shape() != mask_shape) mask = Broadcast(e, choose, mask_shape, {0});
  return e.Add(Opcode::kSelect, shape, {mask, on_true, on_false});
}

Instruction* Compare(Emitter& e, Instruction* a, Instruction* b, const char* direction) {
  return e.Add(Opcode::kCompare, Shape(PrimitiveType::kPred, a->shape().dims()), {a, b},
               {{"direction", std::string(direction)}});
}

Instruction* CallComputation(Emitter& e, Computation* callee, std::vector<Instruction*> args) {
  return e.Add(Opcode::kCall, callee->root()->shape(), std::move(args), {{"to_apply", callee}});
}

std::unique_ptr<Instruction> CloneWithOperands(const Instruction& inst,
                                               std::vector<Instruction*> operands) {
  auto copy = Instruction::Create(inst.opcode(), inst.name(), inst.shape(), std::move(operands));
  for (const Attribute& a : inst.attributes()) copy->set_attr(a.name, a.value);
  copy->set_literal(inst.literal());
  copy->set_parameter_number(inst.parameter_number());
  if (inst.sharding()) copy->set_sharding(*inst.sharding());
  copy->mutable_metadata() = inst.metadata();
  copy->set_frontend_attributes(inst.frontend_attributes());
  copy->set_backend_config(inst.backend_config());
  copy->set_location(inst.location());
  return copy;
}

std::vector<Attribute> AttributesExcept(const Instruction& inst,
                                        std::initializer_list<std::string_view> skip) {
  std::vector<Attribute> out;
  for (const Attribute& a : inst.attributes()) {
    bool skipped = false;
    for (std::string_view s : skip) skipped |= a.name == s;
    if (!skipped) out.push_back(a);
  }
  return out;
}

namespace {

bool HasSideEffectsImpl(const Computation& computation,
                        absl::flat_hash_set<const Computation*>& seen) {
  if (!seen.insert(&computation).second) return false;
  for (const Instruction* inst : computation.instructions()) {
    const OpTraits& traits = GetOpDef(inst->opcode()).traits;
    if (traits.side_effecting || traits.collective ||
        inst->attr_bool("custom_call_has_side_effect")) {
      return true;
    }
    for (const Computation* callee : inst->called_computations()) {
      if (HasSideEffectsImpl(*callee, seen)) return true;
    }
  }
  return false;
}

}  // namespace

bool HasSideEffects(const Computation& computation) {
  absl::flat_hash_set<const Computation*> seen;
  return HasSideEffectsImpl(computation, seen);
}

absl::Status CannotBatch(const Instruction& inst, const std::string& why) {
  return absl::UnimplementedError(absl::StrCat(
      OpcodeName(inst.opcode()), " cannot be batched by vmap: ", why, ", in ", inst.Describe()));
}

}  // namespace sharc::hlo
