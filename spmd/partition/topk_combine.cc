#include "spmd/partition/topk_combine.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "hlo/ir/module.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

namespace {

// (a, b, i, j) -> whether value a goes before value b in topk's order:
//   largest:  (isnan(a) && !isnan(b)) || a > b
//   smallest: (!isnan(a) && isnan(b)) || a < b
// (integers: a > b or a < b).
Computation* OrderComparator(hlo::Module& module, PrimitiveType type, bool largest) {
  const std::string base =
      absl::StrCat("sharc.topk.", largest ? "largest." : "smallest.", hlo::PrimitiveTypeName(type));
  std::string name = base;
  for (int suffix = 1; module.FindComputation(name) != nullptr; ++suffix) {
    name = absl::StrCat(base, ".", suffix);
  }
  auto comp = std::make_unique<Computation>(name);
  const Shape scalar = Shape::Scalar(type), index = Shape::Scalar(PrimitiveType::kS32),
              pred = Shape::Scalar(PrimitiveType::kPred);
  Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, "a", scalar));
  Instruction* c = comp->AddInstruction(Instruction::CreateParameter(1, "b", scalar));
  comp->AddInstruction(Instruction::CreateParameter(2, "i", index));
  comp->AddInstruction(Instruction::CreateParameter(3, "j", index));
  auto compare = [&](const std::string& n, Instruction* x, Instruction* y, const char* direction) {
    auto cmp = Instruction::Create(Opcode::kCompare, n, pred, {x, y});
    cmp->set_attr("direction", std::string(direction));
    return comp->AddInstruction(std::move(cmp));
  };
  Instruction* ordered = compare("ordered", a, c, largest ? "GT" : "LT");
  if (!hlo::IsFloatingPoint(type)) {
    comp->set_root(ordered);
    return module.AddComputation(std::move(comp));
  }
  Instruction* a_nan = compare("a.nan", a, a, "NE");
  Instruction* b_nan = compare("b.nan", c, c, "NE");
  Instruction* first = largest ? a_nan : b_nan;
  Instruction* other = largest ? b_nan : a_nan;
  Instruction* other_number =
      comp->AddInstruction(Instruction::Create(Opcode::kNot, "other.number", pred, {other}));
  Instruction* nan_first =
      comp->AddInstruction(Instruction::Create(Opcode::kAnd, "nan.first", pred, {first, other_number}));
  comp->set_root(
      comp->AddInstruction(Instruction::Create(Opcode::kOr, "before", pred, {nan_first, ordered})));
  return module.AddComputation(std::move(comp));
}

}  // namespace

Instruction* CombineTopKCandidates(LocalBuilder& b, Instruction* local, Instruction* offset,
                                   int64_t k, bool largest,
                                   const std::vector<std::vector<int64_t>>& groups) {
  Instruction* values = b.GetTupleElement(local, 0);
  Instruction* indices = b.GetTupleElement(local, 1);
  const Shape& index_shape = indices->shape();
  const int64_t last = index_shape.rank() - 1;
  indices = b.Add(Instruction::Create(Opcode::kAdd, b.FreshName("topk.global"), index_shape,
                                      {indices, b.Broadcast(offset, index_shape, {})}));
  Instruction* all_values = b.AllGather(values, last, groups);
  Instruction* all_indices = b.AllGather(indices, last, groups);
  const Shape sorted_shape = Shape::Tuple({all_values->shape(), all_indices->shape()});
  auto sort = Instruction::Create(Opcode::kSort, b.FreshName("topk.sort"), sorted_shape,
                                  {all_values, all_indices});
  sort->set_attr("dimensions", hlo::IntList{last});
  sort->set_attr("is_stable", true);
  sort->set_attr("to_apply",
                 OrderComparator(*b.context().module, values->shape().type(), largest));
  Instruction* sorted = b.Add(std::move(sort));
  std::vector<int64_t> limits = values->shape().dims();
  limits[static_cast<size_t>(last)] = k;
  Instruction* top_values = b.Slice(b.GetTupleElement(sorted, 0), limits);
  Instruction* top_indices = b.Slice(b.GetTupleElement(sorted, 1), limits);
  return b.Add(Instruction::Create(Opcode::kTuple, b.FreshName("topk"), local->shape(),
                                   {top_values, top_indices}));
}

}  // namespace sharc::spmd
