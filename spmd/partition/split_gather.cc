#include "spmd/partition/split_gather.h"

#include <algorithm>

#include "spmd/partition/reshard.h"
#include "spmd/sharding_util.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using hlo::Sharding;

namespace {

// One s32 scalar per index component, as a value of the indices' shape
// (component k along index_vector_dim, or the one component of indices
// with an implicit trailing vector dim).
Instruction* PerComponent(LocalBuilder& b, std::vector<Instruction*> parts, const Shape& indices,
                          int64_t index_vector_dim) {
  if (index_vector_dim >= indices.rank()) return b.Broadcast(parts[0], indices, {});
  for (Instruction*& p : parts) p = b.Reshape(p, {1});
  Instruction* vector = parts[0];
  if (parts.size() > 1) {
    auto concat = Instruction::Create(Opcode::kConcatenate, b.FreshName("gather.components"),
                                      Shape(PrimitiveType::kS32, {static_cast<int64_t>(parts.size())}),
                                      parts);
    concat->set_attr("dimensions", hlo::IntList{0});
    vector = b.Add(std::move(concat));
  }
  return b.Broadcast(vector, indices, {index_vector_dim});
}

Instruction* Binary(LocalBuilder& b, Opcode op, const std::string& name, const Shape& shape,
                    Instruction* x, Instruction* y) {
  return b.Add(Instruction::Create(op, b.FreshName(name), shape, {x, y}));
}

Instruction* Compare(LocalBuilder& b, Instruction* x, Instruction* y, const char* direction) {
  auto cmp = Instruction::Create(Opcode::kCompare, b.FreshName("gather.compare"),
                                 Shape(PrimitiveType::kPred, x->shape().dims()), {x, y});
  cmp->set_attr("direction", std::string(direction));
  return b.Add(std::move(cmp));
}

// Operand dims that hold rows split across devices: collapsed, addressed by
// an index component, split. (A split dim the slice takes whole passes
// through instead: its component is clamped to 0 and needs no shift.)
bool SplitRows(const Instruction& inst, const Sharding& s, int64_t d) {
  const auto& collapsed = inst.attr_ints("collapsed_slice_dims");
  return s.TileCount(d) > 1 && std::find(collapsed.begin(), collapsed.end(), d) != collapsed.end();
}

}  // namespace

bool GathersFromSplitIndexedDim(const Instruction& inst) {
  if (inst.opcode() != Opcode::kGather) return false;
  const Sharding s = ShardingOrReplicated(*inst.operand(0));
  if (!s.IsTiled()) return false;
  for (int64_t d : inst.attr_ints("start_index_map")) {
    if (SplitRows(inst, s, d)) return true;
  }
  return false;
}

Instruction* LocalizeSplitGatherIndices(LocalBuilder& b, const Instruction& inst,
                                        std::vector<Instruction*>& operands) {
  const Sharding s = ShardingOrReplicated(*inst.operand(0));
  const Shape& operand = inst.operand(0)->shape();
  const Shape local_operand = s.ShardShape(operand);
  const auto& index_map = inst.attr_ints("start_index_map");
  const auto& slice_sizes = inst.attr_ints("slice_sizes");
  const int64_t index_vector_dim = inst.attr_int("index_vector_dim");
  Instruction* indices = operands[1];
  if (indices->shape().type() != PrimitiveType::kS32) {
    indices = b.Add(Instruction::Create(Opcode::kConvert, b.FreshName("gather.s32_indices"),
                                        Shape(PrimitiveType::kS32, indices->shape().dims()),
                                        {indices}));
  }
  const Shape ishape = indices->shape();
  // Gather clamps each start to [0, dim - slice size] of the global
  // operand; clamping first keeps that meaning once the rows are shifted.
  std::vector<Instruction*> zeros, limits, offsets;
  for (int64_t d : index_map) {
    zeros.push_back(b.ConstantS32(0));
    limits.push_back(b.ConstantS32(operand.dim(d) - slice_sizes[static_cast<size_t>(d)]));
    offsets.push_back(SplitRows(inst, s, d)
                          ? b.PerDeviceValue(TileOffsets(s, operand, d, b.num_devices()), "gather.offset")
                          : b.ConstantS32(0));
  }
  Instruction* clamped = b.Add(Instruction::Create(
      Opcode::kClamp, b.FreshName("gather.clamped"), ishape,
      {PerComponent(b, zeros, ishape, index_vector_dim), indices,
       PerComponent(b, limits, ishape, index_vector_dim)}));
  Instruction* local = Binary(b, Opcode::kSubtract, "gather.local_indices", ishape, clamped,
                              PerComponent(b, offsets, ishape, index_vector_dim));
  operands[1] = local;
  // The rows this device holds: every split component inside its shard.
  std::vector<int64_t> batch;
  for (int64_t d = 0; d < ishape.rank(); ++d)
    if (d != index_vector_dim) batch.push_back(ishape.dim(d));
  const Shape batch_s32(PrimitiveType::kS32, batch), batch_pred(PrimitiveType::kPred, batch);
  Instruction* mask = nullptr;
  for (size_t k = 0; k < index_map.size(); ++k) {
    const int64_t d = index_map[k];
    if (!SplitRows(inst, s, d)) continue;
    Instruction* component = local;
    if (index_vector_dim < ishape.rank()) {
      hlo::IntListList spec;
      std::vector<int64_t> sliced = ishape.dims();
      sliced[static_cast<size_t>(index_vector_dim)] = 1;
      for (int64_t i = 0; i < ishape.rank(); ++i) {
        spec.push_back(i == index_vector_dim
                           ? std::vector<int64_t>{static_cast<int64_t>(k), static_cast<int64_t>(k) + 1, 1}
                           : std::vector<int64_t>{0, ishape.dim(i), 1});
      }
      auto slice = Instruction::Create(Opcode::kSlice, b.FreshName("gather.component"),
                                       Shape(PrimitiveType::kS32, sliced), {local});
      slice->set_attr("slice", std::move(spec));
      component = b.Reshape(b.Add(std::move(slice)), batch);
    }
    Instruction* inside = Binary(
        b, Opcode::kAnd, "gather.in_shard", batch_pred,
        Compare(b, component, b.Broadcast(b.ConstantS32(0), batch_s32, {}), "GE"),
        Compare(b, component, b.Broadcast(b.ConstantS32(local_operand.dim(d)), batch_s32, {}), "LT"));
    mask = mask == nullptr ? inside : Binary(b, Opcode::kAnd, "gather.in_shard", batch_pred, mask, inside);
  }
  return mask;
}

Instruction* MaskSplitGather(LocalBuilder& b, const Instruction& inst, Instruction* gathered,
                             Instruction* mask) {
  const Shape& shape = gathered->shape();
  const auto& offset_dims = inst.attr_ints("offset_dims");
  std::vector<int64_t> batch_positions;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(offset_dims.begin(), offset_dims.end(), d) == offset_dims.end())
      batch_positions.push_back(d);
  }
  Instruction* rows = b.Broadcast(mask, Shape(PrimitiveType::kPred, shape.dims()), batch_positions);
  Instruction* zero = b.Broadcast(b.ScalarConstant(shape.type(), 0), shape, {});
  return b.Add(Instruction::Create(Opcode::kSelect, b.FreshName(inst.name() + ".masked"), shape,
                                   {rows, gathered, zero}));
}

}  // namespace sharc::spmd
