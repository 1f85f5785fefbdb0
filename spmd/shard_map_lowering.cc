#include "spmd/shard_map_lowering.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/named_collectives.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/shard_map_attrs.h"
#include "spmd/mesh.h"
#include "spmd/partition/local_builder.h"
#include "spmd/variance.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::ManualMesh;
using hlo::Opcode;
using hlo::PrimitiveType;
using hlo::Shape;
using Axes = std::vector<std::string>;

namespace {

Instruction* CustomCall(LocalBuilder& b, Instruction* operand, const Shape& shape,
                        const std::string& target, hlo::Sharding sharding) {
  auto call = Instruction::Create(Opcode::kCustomCall, b.FreshName(target), shape, {operand});
  call->set_attr("custom_call_target", target);
  call->set_sharding(std::move(sharding));
  return b.Add(std::move(call));
}

Instruction* ScalarBinary(LocalBuilder& b, Opcode op, Instruction* x, Instruction* y) {
  return b.Add(Instruction::Create(op, b.FreshName(hlo::OpcodeName(op)),
                                   Shape::Scalar(PrimitiveType::kS32), {x, y}));
}

// Inlines one shard_map body into the caller, collective by collective.
class RegionLowering {
 public:
  RegionLowering(LocalBuilder& b, ManualMesh mesh) : b_(b), mesh_(std::move(mesh)) {}

  // This device's position in its group over `axes`, from the partition id
  // (mesh devices are numbered row-major, as the module's partitions are).
  Instruction* AxisIndex(const Axes& axes) {
    Instruction* pid = b_.PartitionId();
    Instruction* position = b_.ConstantS32(0);
    for (const std::string& axis : axes) {
      int64_t stride = 1;
      for (int64_t i = mesh_.AxisIndex(axis) + 1; i < static_cast<int64_t>(mesh_.axes().size());
           ++i) {
        stride *= mesh_.axes()[static_cast<size_t>(i)].size;
      }
      const int64_t size = mesh_.AxisSize(axis);
      Instruction* coord = ScalarBinary(b_, Opcode::kDivide, pid, b_.ConstantS32(stride));
      coord = ScalarBinary(b_, Opcode::kRemainder, coord, b_.ConstantS32(size));
      position = ScalarBinary(b_, Opcode::kMultiply, position, b_.ConstantS32(size));
      position = ScalarBinary(b_, Opcode::kAdd, position, coord);
    }
    return position;
  }

  absl::StatusOr<Instruction*> Collective(const Instruction& inst, Instruction* x) {
    ASSIGN_OR_RETURN(Axes axes, hlo::CollectiveAxes(inst, mesh_));
    const std::vector<std::vector<int64_t>> groups = mesh_.AllGroups(axes);
    const int64_t n = mesh_.GroupSize(axes);
    const bool tiled = inst.attr_bool("tiled");
    const int64_t d = inst.attr_int("dimension");
    switch (inst.opcode()) {
      case Opcode::kPSum:
      case Opcode::kPMax:
      case Opcode::kPMin: {
        Opcode op = inst.opcode() == Opcode::kPSum   ? Opcode::kAdd
                    : inst.opcode() == Opcode::kPMax ? Opcode::kMaximum
                                                     : Opcode::kMinimum;
        return b_.AllReduce(x, b_.Reducer(op, x->shape().type()), groups);
      }
      case Opcode::kPBroadcast:
        return x;  // a type cast: the value is already on every device
      case Opcode::kNamedAllGather:
      case Opcode::kNamedAllGatherInvariant: {
        if (!tiled) x = b_.Reshape(x, WithDim(x->shape().dims(), d, 1));
        return b_.AllGather(x, d, groups);
      }
      case Opcode::kPSumScatter: {
        hlo::Computation* add = b_.Reducer(Opcode::kAdd, x->shape().type());
        Instruction* r = b_.ReduceScatter(x, add, d, groups);
        return tiled ? r : b_.Reshape(r, inst.shape().dims());
      }
      case Opcode::kPScatter: {
        std::vector<int64_t> sizes = x->shape().dims();
        sizes[static_cast<size_t>(d)] /= n;
        std::vector<Instruction*> starts;
        for (int64_t k = 0; k < x->shape().rank(); ++k) {
          starts.push_back(k == d ? ScalarBinary(b_, Opcode::kMultiply, AxisIndex(axes),
                                                 b_.ConstantS32(sizes[static_cast<size_t>(d)]))
                                  : b_.ConstantS32(0));
        }
        Instruction* slice = b_.DynamicSlice(x, starts, sizes);
        return tiled ? slice : b_.Reshape(slice, inst.shape().dims());
      }
      case Opcode::kNamedAllToAll:
        return AllToAll(inst, x, groups, n);
      case Opcode::kPPermute: {
        std::vector<std::vector<int64_t>> pairs;
        for (const std::vector<int64_t>& group : groups) {
          for (const std::vector<int64_t>& p : inst.attr_int_lists("pairs")) {
            pairs.push_back({group[static_cast<size_t>(p[0])], group[static_cast<size_t>(p[1])]});
          }
        }
        return b_.CollectivePermute(x, pairs);
      }
      case Opcode::kAxisIndex:
        return AxisIndex(axes);
      default:
        return hlo::OpError(inst, "is not a named-axis collective");
    }
  }

 private:
  static std::vector<int64_t> WithDim(std::vector<int64_t> dims, int64_t d, int64_t size) {
    dims.insert(dims.begin() + d, size);
    return dims;
  }

  // XLA's array all-to-all splits and concatenates one dimension; a split
  // dimension s and concat dimension c are moved through a leading chunk
  // dimension: [.., S, ..] -> [n, .., S/n, ..] -> all-to-all on 0 -> chunk j
  // (from member j) moved before c and merged into it.
  Instruction* AllToAll(const Instruction& inst, Instruction* x,
                        const std::vector<std::vector<int64_t>>& groups, int64_t n) {
    const int64_t s = inst.attr_int("split_dimension");
    const int64_t c = inst.attr_int("concat_dimension");
    const int64_t rank = x->shape().rank();
    std::vector<int64_t> rest = x->shape().dims();
    rest[static_cast<size_t>(s)] /= n;
    Instruction* split = b_.Reshape(x, WithDim(rest, s, n));  // chunk axis at s
    std::vector<int64_t> to_front = {s};
    for (int64_t k = 0; k <= rank; ++k) {
      if (k != s) to_front.push_back(k);
    }
    Instruction* front = b_.Transpose(split, to_front);  // [n, rest...]
    Instruction* exchanged = b_.AllToAll(front, 0, groups);
    std::vector<int64_t> to_concat;  // chunk axis just before rest's dim c
    for (int64_t k = 0; k < rank; ++k) {
      if (k == c) to_concat.push_back(0);
      to_concat.push_back(k + 1);
    }
    Instruction* moved = b_.Transpose(exchanged, to_concat);
    std::vector<int64_t> out = rest;
    out[static_cast<size_t>(c)] *= n;
    return b_.Reshape(moved, out);
  }

  LocalBuilder& b_;
  ManualMesh mesh_;
};


hlo::Sharding ManualLike(const Shape& shape) {
  if (!shape.is_tuple()) return hlo::Sharding::Manual();
  std::vector<hlo::Sharding> leaves;
  for (const Shape& leaf : shape.tuple_shapes()) leaves.push_back(ManualLike(leaf));
  return hlo::Sharding::Tuple(std::move(leaves));
}

absl::StatusOr<hlo::Sharding> SpecSharding(const ManualMesh& mesh, const hlo::AxisSpec& spec,
                                           int64_t rank) {
  ASSIGN_OR_RETURN(Mesh m, Mesh::Create(mesh.axes()));
  return ToSharding(m, PartitionSpec(spec), rank);
}

// A named-axis op inside a computation called from the body (a loop, a
// branch): only the body's own instructions are rewritten, so such a program
// is refused rather than handed to the partitioner half-lowered.
const Instruction* NestedNamedOp(const Computation& computation, int depth = 0) {
  if (depth > 64) return nullptr;
  for (const Instruction* inst : computation.instructions()) {
    if (depth > 0 && hlo::FindNamedCollective(inst->opcode()) != nullptr) return inst;
    for (const Computation* callee : inst->called_computations()) {
      if (const Instruction* found = NestedNamedOp(*callee, depth + 1)) return found;
    }
  }
  return nullptr;
}

absl::Status LowerOne(hlo::Module& module, Computation& caller, Instruction* shard_map,
                      PartitionContext& context) {
  ASSIGN_OR_RETURN(ManualMesh mesh, hlo::ShardMapMesh(*shard_map));
  ASSIGN_OR_RETURN(std::vector<hlo::AxisSpec> in_specs, hlo::ShardMapSpecs(*shard_map, "in_specs"));
  ASSIGN_OR_RETURN(std::vector<hlo::AxisSpec> out_specs,
                   hlo::ShardMapSpecs(*shard_map, "out_specs"));
  hlo::ModuleConfig& config = module.mutable_config();
  if (config.num_partitions == 1) config.num_partitions = mesh.num_devices();
  if (config.num_partitions != mesh.num_devices()) {
    return hlo::OpError(*shard_map, "runs on a mesh of ", mesh.num_devices(),
                        " devices but the module has num_partitions=", config.num_partitions);
  }
  Computation* body = shard_map->attr_computation("to_apply");
  if (const Instruction* nested = NestedNamedOp(*body)) {
    return hlo::OpError(*nested, "sits in a computation called from the body of shard_map %",
                        shard_map->name(), "; the lowering handles named-axis ops only directly "
                        "in the body (hoist it out of the loop or branch)");
  }
  context.num_devices = mesh.num_devices();
  LocalBuilder b(context, caller);
  RegionLowering region(b, mesh);
  absl::flat_hash_set<const Instruction*> boundary;
  absl::flat_hash_set<const Instruction*> existing;
  for (const Instruction* inst : caller.instructions()) existing.insert(inst);

  absl::flat_hash_map<const Instruction*, Instruction*> value;
  for (int64_t i = 0; i < shard_map->operand_count(); ++i) {
    Instruction* x = shard_map->operand(i);
    const hlo::AxisSpec& spec = in_specs[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(hlo::Sharding sharding, SpecSharding(mesh, spec, x->shape().rank()));
    ASSIGN_OR_RETURN(Shape local, hlo::LocalShape(x->shape(), spec, mesh));
    Instruction* annotated = CustomCall(b, x, x->shape(), "Sharding", sharding);
    boundary.insert(annotated);
    value[body->parameter(i)] = CustomCall(b, annotated, local, "SPMDFullToShardShape",
                                           hlo::Sharding::Manual());
  }
  for (Instruction* inst : body->instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional ||
        inst->opcode() == Opcode::kCall) {
      // The partitioner does not yet partition control-flow callees inside
      // manual regions; refuse here with the reason rather than fail there.
      return hlo::OpError(*inst, "in the body of shard_map %", shard_map->name(),
                          " cannot be lowered yet: control flow inside manual regions is not "
                          "partitioned (the interpreter runs it; sharc run --devices does not)");
    }
    if (inst->opcode() == Opcode::kShardMap) {
      return hlo::OpError(*inst, "is nested in another shard_map's body, which sharc does not "
                                 "lower; merge the meshes into one shard_map");
    }
    std::vector<Instruction*> operands;
    for (const Instruction* op : inst->operands()) operands.push_back(value.at(op));
    if (hlo::FindNamedCollective(inst->opcode()) != nullptr) {
      ASSIGN_OR_RETURN(value[inst],
                       region.Collective(*inst, operands.empty() ? nullptr : operands[0]));
      continue;
    }
    auto copy = Instruction::Create(inst->opcode(), b.FreshName(inst->name()), inst->shape(),
                                    operands);
    for (const hlo::Attribute& a : inst->attributes()) copy->set_attr(a.name, a.value);
    copy->set_literal(inst->literal());
    copy->mutable_metadata() = inst->metadata();
    copy->set_location(inst->location());
    value[inst] = b.Add(std::move(copy));
  }
  Instruction* root = value.at(body->root());
  std::vector<Instruction*> outputs;
  for (size_t k = 0; k < out_specs.size(); ++k) {
    Instruction* leaf = root;
    if (shard_map->shape().is_tuple()) {
      auto gte = Instruction::Create(Opcode::kGetTupleElement, b.FreshName("output"),
                                     root->shape().tuple_shape(static_cast<int64_t>(k)), {root});
      gte->set_attr("index", static_cast<int64_t>(k));
      leaf = b.Add(std::move(gte));
    }
    const Shape& global =
        shard_map->shape().is_tuple() ? shard_map->shape().tuple_shape(static_cast<int64_t>(k))
                                      : shard_map->shape();
    ASSIGN_OR_RETURN(hlo::Sharding sharding, SpecSharding(mesh, out_specs[k], global.rank()));
    Instruction* full = CustomCall(b, leaf, global, "SPMDShardToFullShape", sharding);
    boundary.insert(full);
    outputs.push_back(full);
  }
  Instruction* result = outputs[0];
  if (shard_map->shape().is_tuple()) {
    result = b.Add(Instruction::Create(Opcode::kTuple, b.FreshName(shard_map->name()),
                                       shard_map->shape(), outputs));
    boundary.insert(result);
  }
  // Everything between the boundaries runs per device.
  for (Instruction* inst : caller.instructions()) {
    if (existing.contains(inst) || boundary.contains(inst) || inst->has_sharding()) continue;
    inst->set_sharding(ManualLike(inst->shape()));
  }
  shard_map->ReplaceAllUsesWith(result);
  RETURN_IF_ERROR(caller.RemoveInstruction(shard_map));
  caller.SortInDefinitionOrder();
  return absl::OkStatus();
}

bool CalledBySomething(const hlo::Module& module, const Computation* computation) {
  for (const Computation* c : module.computations()) {
    for (const Instruction* inst : c->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (callee == computation) return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::Status LowerShardMaps(hlo::Module& module) {
  std::vector<std::pair<Computation*, Instruction*>> sites;
  for (Computation* c : module.computations()) {
    for (Instruction* inst : c->instructions()) {
      if (inst->opcode() == Opcode::kShardMap) sites.emplace_back(c, inst);
    }
  }
  if (sites.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(InferDeviceVariance(module));
  PartitionContext context;
  context.module = &module;
  std::vector<Computation*> bodies;
  for (auto& [caller, shard_map] : sites) {
    bodies.push_back(shard_map->attr_computation("to_apply"));
    RETURN_IF_ERROR(LowerOne(module, *caller, shard_map, context));
  }
  for (Computation* body : bodies) {
    bool listed = false;
    for (const Computation* c : module.computations()) listed = listed || c == body;
    if (listed && !CalledBySomething(module, body)) module.RemoveComputation(body);
  }
  return absl::OkStatus();
}

}  // namespace sharc::spmd
