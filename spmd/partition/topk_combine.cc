#include "spmd/partition/topk_combine.h"

#include "hlo/ir/module.h"
#include "hlo/ops/topk_order.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::Shape;

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
                 hlo::TopKOrderComparator(*b.context().module, values->shape().type(), largest));
  Instruction* sorted = b.Add(std::move(sort));
  std::vector<int64_t> limits = values->shape().dims();
  limits[static_cast<size_t>(last)] = k;
  Instruction* top_values = b.Slice(b.GetTupleElement(sorted, 0), limits);
  Instruction* top_indices = b.Slice(b.GetTupleElement(sorted, 1), limits);
  return b.Add(Instruction::Create(Opcode::kTuple, b.FreshName("topk"), local->shape(),
                                   {top_values, top_indices}));
}

}  // namespace sharc::spmd
