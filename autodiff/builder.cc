#include "autodiff/builder.h"

#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ir/literal.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::autodiff {

Instruction* ScalarOf(Emitter& e, PrimitiveType type, double value) {
  hlo::Literal literal(Shape::Scalar(type));
  literal.SetFromDouble(0, value);
  return e.Add(Instruction::CreateConstant("constant", std::move(literal)));
}

Instruction* Full(Emitter& e, const Shape& shape, double value) {
  Instruction* scalar = ScalarOf(e, shape.type(), value);
  if (shape.rank() == 0) return scalar;
  return e.Add(Opcode::kBroadcast, shape, {scalar}, {{"dimensions", IntList{}}});
}

Instruction* Zeros(Emitter& e, const Shape& shape) {
  if (!shape.is_tuple()) return Full(e, shape, 0.0);
  std::vector<Instruction*> elements;
  for (const Shape& s : shape.tuple_shapes()) elements.push_back(Zeros(e, s));
  return Tuple(e, std::move(elements));
}

Instruction* Unary(Emitter& e, Opcode opcode, Instruction* x) {
  return e.Add(opcode, x->shape(), {x});
}

Instruction* Binary(Emitter& e, Opcode opcode, Instruction* a, Instruction* b) {
  return e.Add(opcode, a->shape(), {a, b});
}

Instruction* Add(Emitter& e, Instruction* a, Instruction* b) { return Binary(e, Opcode::kAdd, a, b); }
Instruction* Sub(Emitter& e, Instruction* a, Instruction* b) {
  return Binary(e, Opcode::kSubtract, a, b);
}
Instruction* Mul(Emitter& e, Instruction* a, Instruction* b) {
  return Binary(e, Opcode::kMultiply, a, b);
}
Instruction* Div(Emitter& e, Instruction* a, Instruction* b) {
  return Binary(e, Opcode::kDivide, a, b);
}
Instruction* Neg(Emitter& e, Instruction* a) { return Unary(e, Opcode::kNegate, a); }

Instruction* Scale(Emitter& e, Instruction* x, double c) {
  return Mul(e, x, Full(e, x->shape(), c));
}

Instruction* Cmp(Emitter& e, Instruction* a, Instruction* b, const char* direction) {
  return e.Add(Opcode::kCompare, Shape(PrimitiveType::kPred, a->shape().dims()), {a, b},
               {{"direction", std::string(direction)}});
}

Instruction* Select(Emitter& e, Instruction* pred, Instruction* on_true, Instruction* on_false) {
  return e.Add(Opcode::kSelect, on_true->shape(), {pred, on_true, on_false});
}

Instruction* Convert(Emitter& e, Instruction* x, PrimitiveType type) {
  if (x->shape().type() == type) return x;
  return e.Add(Opcode::kConvert, Shape(type, x->shape().dims()), {x});
}

namespace {

Instruction* ComplexPart(Emitter& e, Opcode part, Instruction* z) {
  const PrimitiveType type =
      z->shape().type() == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32;
  return e.Add(part, Shape(type, z->shape().dims()), {z});
}

}  // namespace

Instruction* RealPart(Emitter& e, Instruction* z) { return ComplexPart(e, Opcode::kReal, z); }
Instruction* ImagPart(Emitter& e, Instruction* z) { return ComplexPart(e, Opcode::kImag, z); }

Instruction* MakeComplex(Emitter& e, Instruction* re, Instruction* im) {
  const PrimitiveType type =
      re->shape().type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64;
  return e.Add(Opcode::kComplex, Shape(type, re->shape().dims()), {re, im});
}

Instruction* Conj(Emitter& e, Instruction* z) {
  return MakeComplex(e, RealPart(e, z), Neg(e, ImagPart(e, z)));
}

Instruction* Reshape(Emitter& e, Instruction* x, std::vector<int64_t> dims) {
  if (x->shape().dims() == dims) return x;
  return e.Add(Opcode::kReshape, Shape(x->shape().type(), std::move(dims)), {x});
}

Instruction* BroadcastInDim(Emitter& e, Instruction* x, const Shape& shape, IntList dims) {
  if (x->shape() == shape) return x;
  return e.Add(Opcode::kBroadcast, shape, {x}, {{"dimensions", std::move(dims)}});
}

Instruction* Gte(Emitter& e, Instruction* tuple, int64_t index) {
  if (tuple->opcode() == Opcode::kTuple) return tuple->operand(index);
  return e.Add(Opcode::kGetTupleElement, tuple->shape().tuple_shape(index), {tuple},
               {{"index", index}});
}

Instruction* Tuple(Emitter& e, std::vector<Instruction*> elements) {
  std::vector<Shape> shapes;
  for (const Instruction* x : elements) shapes.push_back(x->shape());
  return e.Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), std::move(elements));
}

Instruction* CallOf(Emitter& e, Computation* callee, std::vector<Instruction*> args) {
  return e.Add(Opcode::kCall, callee->root()->shape(), std::move(args), {{"to_apply", callee}});
}

Instruction* AddAny(Emitter& e, Instruction* a, Instruction* b) {
  if (!a->shape().is_tuple()) return Add(e, a, b);
  std::vector<Instruction*> sums;
  for (int64_t i = 0; i < a->shape().tuple_size(); ++i) {
    sums.push_back(AddAny(e, Gte(e, a, i), Gte(e, b, i)));
  }
  return Tuple(e, std::move(sums));
}

Instruction* InlineInto(Emitter& e, const Computation& callee,
                        const std::vector<Instruction*>& args) {
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    map[callee.parameter(i)] = args[static_cast<size_t>(i)];
  }
  for (const Instruction* inst : callee.instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* op : inst->operands()) operands.push_back(map.at(op));
    map[inst] = e.Add(hlo::CloneWithOperands(*inst, std::move(operands)), /*keep_name=*/true);
  }
  return map.at(callee.root());
}

Module& ModuleOf(Emitter& e) { return *e.computation()->parent(); }

std::string UniqueComputationName(const Module& module, const std::string& base) {
  std::string name = base;
  for (int64_t i = 1; module.FindComputation(name) != nullptr; ++i) {
    name = absl::StrCat(base, ".", i);
  }
  return name;
}

Computation* NewComputation(Module& module, const std::string& base) {
  return module.AddComputation(
      std::make_unique<Computation>(UniqueComputationName(module, base)));
}

}  // namespace sharc::autodiff
