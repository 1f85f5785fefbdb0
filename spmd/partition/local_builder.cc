#include "spmd/partition/local_builder.h"

#include "absl/strings/str_cat.h"
#include "hlo/ir/scalar_reducer.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;

std::string LocalBuilder::FreshName(const std::string& base) {
  std::string name;
  do {
    name = absl::StrCat(base, ".", context_.next_name++);
  } while (computation_.FindInstruction(name) != nullptr);
  return name;
}

Instruction* LocalBuilder::Add(std::unique_ptr<Instruction> inst) {
  return computation_.AddInstruction(std::move(inst));
}

Instruction* LocalBuilder::PartitionId() {
  if (partition_id_ != nullptr) return partition_id_;
  Instruction* pid = Add(Instruction::Create(Opcode::kPartitionId, FreshName("partition-id"),
                                             Shape::Scalar(PrimitiveType::kU32)));
  partition_id_ = Add(Instruction::Create(Opcode::kConvert, FreshName("partition-id.s32"),
                                          Shape::Scalar(PrimitiveType::kS32), {pid}));
  return partition_id_;
}

Instruction* LocalBuilder::ConstantS32(int64_t value) {
  return Add(Instruction::CreateConstant(FreshName("constant"),
                                         hlo::Literal::Scalar<int32_t>(static_cast<int32_t>(value))));
}

Instruction* LocalBuilder::ScalarConstant(PrimitiveType type, double value) {
  hlo::Literal lit(Shape::Scalar(type));
  lit.SetFromDouble(0, value);
  return Add(Instruction::CreateConstant(FreshName("constant"), std::move(lit)));
}

Instruction* LocalBuilder::PerDeviceValue(const std::vector<int64_t>& table,
                                          const std::string& base) {
  bool uniform = true;
  for (int64_t v : table) uniform &= v == table[0];
  if (uniform) return ConstantS32(table.empty() ? 0 : table[0]);
  std::vector<int32_t> values(table.begin(), table.end());
  Instruction* constant = Add(Instruction::CreateConstant(
      FreshName(base + ".table"), hlo::Literal::Vector<int32_t>(absl::MakeConstSpan(values))));
  auto slice = Instruction::Create(Opcode::kDynamicSlice, FreshName(base),
                                   Shape(PrimitiveType::kS32, {1}), {constant, PartitionId()});
  slice->set_attr("dynamic_slice_sizes", hlo::IntList{1});
  Instruction* one = Add(std::move(slice));
  return Reshape(one, {});
}

Instruction* LocalBuilder::Broadcast(Instruction* value, const Shape& shape,
                                     std::vector<int64_t> dims) {
  Shape out(value->shape().type(), shape.dims());
  auto b = Instruction::Create(Opcode::kBroadcast, FreshName("broadcast"), out, {value});
  b->set_attr("dimensions", hlo::IntList(std::move(dims)));
  return Add(std::move(b));
}

Instruction* LocalBuilder::Reshape(Instruction* value, std::vector<int64_t> dims) {
  if (value->shape().dims() == dims) return value;
  return Add(Instruction::Create(Opcode::kReshape, FreshName("reshape"),
                                 Shape(value->shape().type(), std::move(dims)), {value}));
}

Instruction* LocalBuilder::Transpose(Instruction* value, std::vector<int64_t> perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return value;
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(value->shape().dim(p));
  auto t = Instruction::Create(Opcode::kTranspose, FreshName("transpose"),
                               Shape(value->shape().type(), dims), {value});
  t->set_attr("dimensions", hlo::IntList(std::move(perm)));
  return Add(std::move(t));
}

Instruction* LocalBuilder::Slice(Instruction* value, std::vector<int64_t> limits) {
  if (value->shape().dims() == limits) return value;
  hlo::IntListList spec;
  for (int64_t l : limits) spec.push_back({0, l, 1});
  auto s = Instruction::Create(Opcode::kSlice, FreshName("slice"),
                               Shape(value->shape().type(), std::move(limits)), {value});
  s->set_attr("slice", std::move(spec));
  return Add(std::move(s));
}

Instruction* LocalBuilder::PadHigh(Instruction* value, const std::vector<int64_t>& high,
                                   Instruction* pad_value) {
  bool none = true;
  for (int64_t h : high) none &= h == 0;
  if (none) return value;
  if (pad_value == nullptr) pad_value = ScalarConstant(value->shape().type(), 0);
  hlo::IntListList config;
  std::vector<int64_t> dims = value->shape().dims();
  for (size_t d = 0; d < high.size(); ++d) {
    config.push_back({0, high[d], 0});
    dims[d] += high[d];
  }
  auto p = Instruction::Create(Opcode::kPad, FreshName("pad"),
                               Shape(value->shape().type(), std::move(dims)), {value, pad_value});
  p->set_attr("padding", std::move(config));
  return Add(std::move(p));
}

Instruction* LocalBuilder::DynamicSlice(Instruction* value, const std::vector<Instruction*>& starts,
                                        std::vector<int64_t> sizes) {
  std::vector<Instruction*> operands{value};
  operands.insert(operands.end(), starts.begin(), starts.end());
  auto s = Instruction::Create(Opcode::kDynamicSlice, FreshName("dynamic-slice"),
                               Shape(value->shape().type(), sizes), operands);
  s->set_attr("dynamic_slice_sizes", hlo::IntList(std::move(sizes)));
  return Add(std::move(s));
}

Instruction* LocalBuilder::MaskPadding(Instruction* value, int64_t dim, Instruction* offset,
                                       int64_t size, Instruction* fill) {
  const Shape& shape = value->shape();
  Shape index_shape(PrimitiveType::kS32, shape.dims());
  auto iota = Instruction::Create(Opcode::kIota, FreshName("iota"), index_shape);
  iota->set_attr("iota_dimension", dim);
  Instruction* idx = Add(std::move(iota));
  Instruction* off = Broadcast(offset, index_shape, {});
  Instruction* global = Add(Instruction::Create(Opcode::kAdd, FreshName("add"), index_shape, {idx, off}));
  Instruction* limit = Broadcast(ConstantS32(size), index_shape, {});
  auto cmp = Instruction::Create(Opcode::kCompare, FreshName("compare"),
                                 Shape(PrimitiveType::kPred, shape.dims()), {global, limit});
  cmp->set_attr("direction", std::string("LT"));
  Instruction* mask = Add(std::move(cmp));
  Instruction* filler = Broadcast(fill, shape, {});
  return Add(Instruction::Create(Opcode::kSelect, FreshName("select"), shape, {mask, value, filler}));
}

namespace {
void SetCollectiveAttrs(Instruction& inst, PartitionContext& context,
                        const std::vector<std::vector<int64_t>>& groups, bool global_ids) {
  inst.set_attr("channel_id", context.next_channel_id++);
  inst.set_attr("replica_groups", hlo::IntListList(groups));
  if (global_ids) inst.set_attr("use_global_device_ids", true);
}
}  // namespace

Instruction* LocalBuilder::AllGather(Instruction* value, int64_t dim,
                                     const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> dims = value->shape().dims();
  dims[dim] *= static_cast<int64_t>(groups[0].size());
  auto g = Instruction::Create(Opcode::kAllGather, FreshName("all-gather"),
                               Shape(value->shape().type(), dims), {value});
  SetCollectiveAttrs(*g, context_, groups, true);
  g->set_attr("dimensions", hlo::IntList{dim});
  return Add(std::move(g));
}

Instruction* LocalBuilder::AllReduce(Instruction* value, hlo::Computation* reducer,
                                     const std::vector<std::vector<int64_t>>& groups) {
  auto r = Instruction::Create(Opcode::kAllReduce, FreshName("all-reduce"), value->shape(), {value});
  SetCollectiveAttrs(*r, context_, groups, true);
  r->set_attr("to_apply", reducer);
  return Add(std::move(r));
}

Instruction* LocalBuilder::ReduceScatter(Instruction* value, hlo::Computation* reducer,
                                        int64_t dim,
                                        const std::vector<std::vector<int64_t>>& groups) {
  std::vector<int64_t> dims = value->shape().dims();
  dims[dim] /= static_cast<int64_t>(groups[0].size());
  auto r = Instruction::Create(Opcode::kReduceScatter, FreshName("reduce-scatter"),
                               Shape(value->shape().type(), dims), {value});
  SetCollectiveAttrs(*r, context_, groups, true);
  r->set_attr("dimensions", hlo::IntList{dim});
  r->set_attr("to_apply", reducer);
  return Add(std::move(r));
}

Instruction* LocalBuilder::AllToAll(Instruction* value, int64_t dim,
                                    const std::vector<std::vector<int64_t>>& groups) {
  auto a = Instruction::Create(Opcode::kAllToAll, FreshName("all-to-all"), value->shape(), {value});
  SetCollectiveAttrs(*a, context_, groups, false);
  a->set_attr("dimensions", hlo::IntList{dim});
  return Add(std::move(a));
}

Instruction* LocalBuilder::CollectivePermute(Instruction* value,
                                             const std::vector<std::vector<int64_t>>& pairs) {
  auto p = Instruction::Create(Opcode::kCollectivePermute, FreshName("collective-permute"),
                               value->shape(), {value});
  p->set_attr("channel_id", context_.next_channel_id++);
  p->set_attr("source_target_pairs", hlo::IntListList(pairs));
  return Add(std::move(p));
}

Instruction* LocalBuilder::KeepOnly(Instruction* value, const std::vector<int64_t>& keep,
                                   Instruction* filler) {
  const Shape& shape = value->shape();
  auto cmp = Instruction::Create(Opcode::kCompare, FreshName("keep"),
                                 Shape(hlo::PrimitiveType::kPred, {}),
                                 {PerDeviceValue(keep, "keep"), ConstantS32(0)});
  cmp->set_attr("direction", std::string("NE"));
  Instruction* mask = Broadcast(Add(std::move(cmp)), Shape(hlo::PrimitiveType::kPred, shape.dims()), {});
  Instruction* others = Broadcast(filler, shape, {});
  return Add(Instruction::Create(Opcode::kSelect, FreshName("masked"), shape, {mask, value, others}));
}

Instruction* LocalBuilder::GetTupleElement(Instruction* tuple, int64_t index) {
  auto gte = Instruction::Create(Opcode::kGetTupleElement, FreshName("element"),
                                 tuple->shape().tuple_shape(index), {tuple});
  gte->set_attr("index", index);
  return Add(std::move(gte));
}

hlo::Computation* LocalBuilder::Reducer(Opcode op, PrimitiveType type) {
  return hlo::BinaryReducer(*context_.module, op, type);
}

}  // namespace sharc::spmd
