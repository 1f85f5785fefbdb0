// The named-axis collectives of shard_map bodies, with JAX's names. Each
// names mesh axes (`axes={i,j}`), not devices: the group of a device is the
// devices that differ from it only on those axes, and its position in the
// group is its coordinates on them, linearised in the order listed.
//
//   psum / pmax / pmin        reduce over the group              (same shape)
//   pbroadcast                identity (a type cast I -> V)      (same shape)
//   all_gather[_invariant]    concatenate the group's values     dimension, tiled
//   psum_scatter              psum, keep this device's block     dimension, tiled
//   pscatter                  keep this device's block, no comm  dimension, tiled
//   all_to_all                block j of the split dim to member j, concatenated
//                             along the concat dim               split_dimension,
//                                                                concat_dimension
//   ppermute                  value of the pair's source (zeros if none)  pairs
//   axis_index                s32 position in the group          (no operand)
//
// Untiled gather inserts a dimension of the group size at `dimension`;
// untiled scatter needs that dimension to be the group size and removes it.
// Evaluation runs on the simulated devices of shard_map's reference
// evaluator: partition id = device number in the mesh (row-major).
#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/named_collectives.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/shard_map_attrs.h"
#include "hlo/ops/shard_map_blocks.h"

namespace sharc::hlo {
namespace {

constexpr bool kRequired = true;

struct Named {
  ManualMesh mesh;
  std::vector<std::string> axes;
  int64_t group_size = 1;
};

absl::StatusOr<Named> ReadNamed(const Instruction& inst) {
  Named named;
  ASSIGN_OR_RETURN(named.mesh, EnclosingMesh(inst));
  ASSIGN_OR_RETURN(named.axes, CollectiveAxes(inst, named.mesh));
  named.group_size = named.mesh.GroupSize(named.axes);
  return named;
}

absl::StatusOr<Shape> ArrayOperand(const Instruction& inst) {
  RETURN_IF_ERROR(ExpectArrayOperand(inst, 0));
  return inst.operand(0)->shape();
}

// ------------------------------------------------------- shape inference --

absl::StatusOr<Shape> InferSameShape(const Instruction& inst) {
  RETURN_IF_ERROR(ReadNamed(inst).status());
  ASSIGN_OR_RETURN(Shape shape, ArrayOperand(inst));
  const Opcode op = inst.opcode();
  if ((op == Opcode::kPSum || op == Opcode::kPMax || op == Opcode::kPMin) &&
      shape.type() == PrimitiveType::kPred) {
    return OpError(inst, "cannot reduce pred values; convert them to a number type first");
  }
  return shape;
}

absl::StatusOr<Shape> InferGather(const Instruction& inst) {
  ASSIGN_OR_RETURN(Named named, ReadNamed(inst));
  ASSIGN_OR_RETURN(Shape shape, ArrayOperand(inst));
  const int64_t d = inst.attr_int("dimension");
  const bool tiled = inst.attr_bool("tiled");
  const int64_t limit = tiled ? shape.rank() : shape.rank() + 1;
  if (d < 0 || d >= limit) {
    return OpError(inst, "dimension ", d, " is out of range for ", shape.ToString(),
                   tiled ? "" : " (untiled gather inserts a dimension)");
  }
  if (tiled) {
    shape.mutable_dims()[static_cast<size_t>(d)] *= named.group_size;
  } else {
    shape.mutable_dims().insert(shape.mutable_dims().begin() + d, named.group_size);
  }
  RETURN_IF_ERROR(ValidateShape(shape));
  return shape;
}

absl::StatusOr<Shape> InferScatter(const Instruction& inst) {
  ASSIGN_OR_RETURN(Named named, ReadNamed(inst));
  ASSIGN_OR_RETURN(Shape shape, ArrayOperand(inst));
  if (inst.opcode() == Opcode::kPSumScatter && shape.type() == PrimitiveType::kPred) {
    return OpError(inst, "cannot add pred values; convert them to a number type first");
  }
  const int64_t d = inst.attr_int("dimension");
  if (d < 0 || d >= shape.rank()) {
    return OpError(inst, "dimension ", d, " is out of range for ", shape.ToString());
  }
  const int64_t size = shape.dim(d), n = named.group_size;
  if (inst.attr_bool("tiled")) {
    if (size % n != 0) {
      return OpError(inst, "dimension ", d, " of size ", size, " is not divisible by the ", n,
                     " devices of axes {", absl::StrJoin(named.axes, ","), "}");
    }
    shape.mutable_dims()[static_cast<size_t>(d)] = size / n;
  } else {
    if (size != n) {
      return OpError(inst, "untiled: dimension ", d, " has size ", size,
                     " but must equal the group size ", n, " (or pass tiled=true)");
    }
    shape.mutable_dims().erase(shape.mutable_dims().begin() + d);
  }
  return shape;
}

absl::StatusOr<Shape> InferAllToAll(const Instruction& inst) {
  ASSIGN_OR_RETURN(Named named, ReadNamed(inst));
  ASSIGN_OR_RETURN(Shape shape, ArrayOperand(inst));
  if (!inst.attr_bool("tiled")) {
    return OpError(inst, "supports only tiled=true (the split dimension shrinks by the group "
                         "size and the concat dimension grows by it); reshape around it for "
                         "the untiled form");
  }
  const int64_t split = inst.attr_int("split_dimension");
  const int64_t concat = inst.attr_int("concat_dimension");
  for (int64_t d : {split, concat}) {
    if (d < 0 || d >= shape.rank()) {
      return OpError(inst, "dimension ", d, " is out of range for ", shape.ToString());
    }
  }
  const int64_t n = named.group_size;
  if (shape.dim(split) % n != 0) {
    return OpError(inst, "split_dimension ", split, " of size ", shape.dim(split),
                   " is not divisible by the ", n, " devices of axes {",
                   absl::StrJoin(named.axes, ","), "}");
  }
  shape.mutable_dims()[static_cast<size_t>(split)] /= n;
  shape.mutable_dims()[static_cast<size_t>(concat)] *= n;
  return shape;
}

absl::StatusOr<Shape> InferAxisIndex(const Instruction& inst) {
  RETURN_IF_ERROR(ReadNamed(inst).status());
  return Shape::Scalar(PrimitiveType::kS32);
}

absl::Status VerifyPPermute(const Instruction& inst) {
  ASSIGN_OR_RETURN(Named named, ReadNamed(inst));
  absl::flat_hash_set<int64_t> sources, targets;
  for (const std::vector<int64_t>& pair : inst.attr_int_lists("pairs")) {
    if (pair.size() != 2) {
      return OpError(inst, "pairs entry {", absl::StrJoin(pair, ","), "} is not a pair");
    }
    for (int64_t p : pair) {
      if (p < 0 || p >= named.group_size) {
        return OpError(inst, "pairs names axis index ", p, ", outside [0, ", named.group_size,
                       ") of axes {", absl::StrJoin(named.axes, ","), "}");
      }
    }
    if (!sources.insert(pair[0]).second) {
      return OpError(inst, "axis index ", pair[0], " is the source of more than one pair");
    }
    if (!targets.insert(pair[1]).second) {
      return OpError(inst, "axis index ", pair[1], " is the target of more than one pair");
    }
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ evaluation --

// This device's place among the simulated devices of the enclosing mesh.
struct Place {
  Named named;
  int64_t device = 0;
  int64_t position = 0;
  std::vector<int64_t> members;
};

absl::StatusOr<Place> FindPlace(const Instruction& inst, const EvalContext& ctx) {
  Place place;
  ASSIGN_OR_RETURN(place.named, ReadNamed(inst));
  const int64_t devices = place.named.mesh.num_devices();
  if (ctx.num_partitions() != devices) {
    return OpError(inst, "runs on ", ctx.num_partitions(), " device(s) but its mesh {",
                   PrintMeshText(place.named.mesh.axes()), "} has ", devices,
                   "; named-axis collectives run inside a shard_map body");
  }
  place.device = ctx.partition_id();
  place.position = place.named.mesh.GroupPosition(place.device, place.named.axes);
  place.members = place.named.mesh.GroupMembers(place.device, place.named.axes);
  return place;
}

absl::StatusOr<std::vector<Literal>> ExchangeOperand(const Instruction& inst,
                                                     const Literal& value, EvalContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<Literal> all, ctx.ExchangeWithAllDevices(inst, value));
  for (size_t d = 0; d < all.size(); ++d) {
    if (all[d].shape() != value.shape()) {
      return OpError(inst, "device ", d, " contributed ", all[d].shape().ToString(),
                     ", expected ", value.shape().ToString());
    }
  }
  return all;
}

Opcode ReducerOf(Opcode op) {
  if (op == Opcode::kPMax) return Opcode::kMaximum;
  if (op == Opcode::kPMin) return Opcode::kMinimum;
  return Opcode::kAdd;
}

// The group's values combined in member order (bit-identical on every member).
Literal ReduceGroup(Opcode op, const std::vector<Literal>& all, const Place& place) {
  Literal acc = all[static_cast<size_t>(place.members[0])];
  for (size_t j = 1; j < place.members.size(); ++j) {
    const Literal& x = all[static_cast<size_t>(place.members[j])];
    for (int64_t i = 0; i < acc.num_elements(); ++i) ApplyBinaryReducer(op, acc, i, x, i);
  }
  return acc;
}

// Operand viewed with the scatter/gather dimension present: untiled ops
// act like tiled ones on a size-1 (gather) or size-n (scatter) dimension.
Shape WithDimension(const Shape& shape, int64_t d, int64_t size) {
  Shape out = shape;
  out.mutable_dims().insert(out.mutable_dims().begin() + d, size);
  return out;
}

absl::StatusOr<Literal> EvaluateReduction(const Instruction& inst,
                                          absl::Span<const Literal* const> operands,
                                          EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  ASSIGN_OR_RETURN(std::vector<Literal> all, ExchangeOperand(inst, *operands[0], ctx));
  return ReduceGroup(ReducerOf(inst.opcode()), all, place);
}

absl::StatusOr<Literal> EvaluatePBroadcast(const Instruction& inst,
                                           absl::Span<const Literal* const> operands,
                                           EvalContext&) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  return *operands[0];
}

absl::StatusOr<Literal> EvaluateGather(const Instruction& inst,
                                       absl::Span<const Literal* const> operands,
                                       EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferGather(inst));
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  ASSIGN_OR_RETURN(std::vector<Literal> all, ExchangeOperand(inst, *operands[0], ctx));
  const int64_t d = inst.attr_int("dimension");
  Shape piece = inst.attr_bool("tiled") ? operands[0]->shape()
                                        : WithDimension(operands[0]->shape(), d, 1);
  Literal result(shape);
  std::vector<int64_t> offset(static_cast<size_t>(shape.rank()), 0);
  for (size_t j = 0; j < place.members.size(); ++j) {
    offset[static_cast<size_t>(d)] = static_cast<int64_t>(j) * piece.dim(d);
    InsertBlock(Reshaped(all[static_cast<size_t>(place.members[j])], piece), result, offset);
  }
  return result;
}

absl::StatusOr<Literal> EvaluateScatter(const Instruction& inst,
                                        absl::Span<const Literal* const> operands,
                                        EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferScatter(inst));
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  Literal whole = *operands[0];
  if (inst.opcode() == Opcode::kPSumScatter) {
    ASSIGN_OR_RETURN(std::vector<Literal> all, ExchangeOperand(inst, *operands[0], ctx));
    whole = ReduceGroup(Opcode::kAdd, all, place);
  }
  const int64_t d = inst.attr_int("dimension");
  Shape piece = inst.attr_bool("tiled") ? shape : WithDimension(shape, d, 1);
  std::vector<int64_t> offset(static_cast<size_t>(piece.rank()), 0);
  offset[static_cast<size_t>(d)] = place.position * piece.dim(d);
  return Reshaped(ExtractBlock(whole, piece, offset), shape);
}

absl::StatusOr<Literal> EvaluateAllToAll(const Instruction& inst,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferAllToAll(inst));
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  ASSIGN_OR_RETURN(std::vector<Literal> all, ExchangeOperand(inst, *operands[0], ctx));
  const int64_t split = inst.attr_int("split_dimension");
  const int64_t concat = inst.attr_int("concat_dimension");
  Shape piece = operands[0]->shape();
  piece.mutable_dims()[static_cast<size_t>(split)] /= place.named.group_size;
  Literal result(shape);
  std::vector<int64_t> from(static_cast<size_t>(piece.rank()), 0), to = from;
  from[static_cast<size_t>(split)] = place.position * piece.dim(split);
  for (size_t j = 0; j < place.members.size(); ++j) {
    to[static_cast<size_t>(concat)] = static_cast<int64_t>(j) * piece.dim(concat);
    InsertBlock(ExtractBlock(all[static_cast<size_t>(place.members[j])], piece, from), result, to);
  }
  return result;
}

absl::StatusOr<Literal> EvaluatePPermute(const Instruction& inst,
                                         absl::Span<const Literal* const> operands,
                                         EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  RETURN_IF_ERROR(VerifyPPermute(inst));
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  ASSIGN_OR_RETURN(std::vector<Literal> all, ExchangeOperand(inst, *operands[0], ctx));
  for (const std::vector<int64_t>& pair : inst.attr_int_lists("pairs")) {
    if (pair[1] == place.position) {
      return all[static_cast<size_t>(place.members[static_cast<size_t>(pair[0])])];
    }
  }
  return Literal(operands[0]->shape());  // no pair targets this device
}

absl::StatusOr<Literal> EvaluateAxisIndex(const Instruction& inst,
                                          absl::Span<const Literal* const>, EvalContext& ctx) {
  ASSIGN_OR_RETURN(Place place, FindPlace(inst, ctx));
  return Literal::Scalar<int32_t>(static_cast<int32_t>(place.position));
}

// ----------------------------------------------------------- registration --

OpDef NamedDef(Opcode opcode, InferShapeFn infer, EvaluateFn evaluate, bool communicates) {
  OpDef def;
  def.opcode = opcode;
  def.min_operands = 1;
  def.max_operands = 1;
  def.attributes = {{"axes", AttrKind::kAxisNames, kRequired}};
  def.infer_shape = std::move(infer);
  def.evaluate = std::move(evaluate);
  def.traits.collective = communicates;
  return def;
}

}  // namespace

const NamedCollectiveInfo* FindNamedCollective(Opcode opcode) {
  using E = VarianceEffect;
  using O = OperandVariance;
  static const std::vector<NamedCollectiveInfo>* table = new std::vector<NamedCollectiveInfo>{
      {Opcode::kPSum, E::kToInvariant, O::kVarying, Opcode::kPBroadcast, "all-reduce"},
      {Opcode::kPBroadcast, E::kToVarying, O::kInvariant, Opcode::kPSum, ""},
      {Opcode::kPMax, E::kToInvariant, O::kVarying, std::nullopt, "all-reduce"},
      {Opcode::kPMin, E::kToInvariant, O::kVarying, std::nullopt, "all-reduce"},
      {Opcode::kNamedAllGather, E::kVarying, O::kVarying, Opcode::kPSumScatter, "all-gather"},
      {Opcode::kNamedAllGatherInvariant, E::kToInvariant, O::kVarying, Opcode::kPScatter,
       "all-gather"},
      {Opcode::kPSumScatter, E::kVarying, O::kVarying, Opcode::kNamedAllGather,
       "reduce-scatter"},
      {Opcode::kPScatter, E::kToVarying, O::kAny, Opcode::kNamedAllGatherInvariant, ""},
      {Opcode::kNamedAllToAll, E::kVarying, O::kVarying, Opcode::kNamedAllToAll, "all-to-all"},
      {Opcode::kPPermute, E::kVarying, O::kVarying, Opcode::kPPermute, "collective-permute"},
      {Opcode::kAxisIndex, E::kSource, O::kAny, std::nullopt, ""},
  };
  for (const NamedCollectiveInfo& info : *table) {
    if (info.opcode == opcode) return &info;
  }
  return nullptr;
}

void RegisterNamedCollectiveOps(OpRegistry& registry) {
  for (Opcode op : {Opcode::kPSum, Opcode::kPMax, Opcode::kPMin}) {
    registry.Register(NamedDef(op, InferSameShape, EvaluateReduction, true));
  }
  registry.Register(NamedDef(Opcode::kPBroadcast, InferSameShape, EvaluatePBroadcast, false));
  const std::vector<AttrSpec> block_attrs = {{"axes", AttrKind::kAxisNames, kRequired},
                                             {"dimension", AttrKind::kInt, kRequired},
                                             {"tiled", AttrKind::kBool}};
  for (Opcode op : {Opcode::kNamedAllGather, Opcode::kNamedAllGatherInvariant}) {
    OpDef def = NamedDef(op, InferGather, EvaluateGather, true);
    def.attributes = block_attrs;
    registry.Register(std::move(def));
  }
  {
    OpDef def = NamedDef(Opcode::kPSumScatter, InferScatter, EvaluateScatter, true);
    def.attributes = block_attrs;
    registry.Register(std::move(def));
  }
  {
    OpDef def = NamedDef(Opcode::kPScatter, InferScatter, EvaluateScatter, false);
    def.attributes = block_attrs;
    registry.Register(std::move(def));
  }
  {
    OpDef def = NamedDef(Opcode::kNamedAllToAll, InferAllToAll, EvaluateAllToAll, true);
    def.attributes = {{"axes", AttrKind::kAxisNames, kRequired},
                      {"split_dimension", AttrKind::kInt, kRequired},
                      {"concat_dimension", AttrKind::kInt, kRequired},
                      {"tiled", AttrKind::kBool}};
    registry.Register(std::move(def));
  }
  {
    OpDef def = NamedDef(Opcode::kPPermute, InferSameShape, EvaluatePPermute, true);
    def.attributes = {{"axes", AttrKind::kAxisNames, kRequired},
                      {"pairs", AttrKind::kPairs, kRequired}};
    def.verify = VerifyPPermute;
    registry.Register(std::move(def));
  }
  {
    OpDef def = NamedDef(Opcode::kAxisIndex, InferAxisIndex, EvaluateAxisIndex, false);
    def.min_operands = 0;
    def.max_operands = 0;
    registry.Register(std::move(def));
  }
}

}  // namespace sharc::hlo
