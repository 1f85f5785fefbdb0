#include "spmd/shard_map_lowering.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/custom_call_targets.h"
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

bool IsControlFlow(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall;
}

using ValueMap = absl::flat_hash_map<const Instruction*, Instruction*>;

// Copies a shard_map body, and the computations its loops, branches and
// calls run, into per-device code: named collectives become XLA collectives
// and every control-flow callee is cloned the same way (once per
// shard_map), its values marked manual, so the partitioner treats the
// whole region as already partitioned. Scalar callees (reducers,
// comparators) are shared as they are.
class RegionCopier {
 public:
  RegionCopier(hlo::Module& module, PartitionContext& context, ManualMesh mesh,
               const Instruction& shard_map)
      : module_(module), context_(context), mesh_(std::move(mesh)), shard_map_(shard_map) {}

  // Copies the non-parameter instructions of `source` into b's computation;
  // `value` already maps `source`'s parameters.
  absl::Status Copy(const Computation& source, LocalBuilder& b, ValueMap& value) {
    RegionLowering region(b, mesh_);
    for (Instruction* inst : source.instructions()) {
      if (inst->opcode() == Opcode::kParameter) continue;
      if (inst->opcode() == Opcode::kShardMap) {
        return hlo::OpError(*inst, "is nested in the body of shard_map %", shard_map_.name(),
                            ", which sharc does not lower; merge the meshes into one shard_map");
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
      for (const hlo::Attribute& a : inst->attributes()) {
        hlo::AttrValue v = a.value;
        if (IsControlFlow(inst->opcode())) {
          if (auto* callee = std::get_if<Computation*>(&v)) {
            ASSIGN_OR_RETURN(*callee, Clone(**callee));
          }
          if (auto* callees = std::get_if<std::vector<Computation*>>(&v)) {
            for (Computation*& callee : *callees) {
              ASSIGN_OR_RETURN(callee, Clone(*callee));
            }
          }
        }
        copy->set_attr(a.name, std::move(v));
      }
      copy->set_literal(inst->literal());
      copy->mutable_metadata() = inst->metadata();
      copy->set_location(inst->location());
      value[inst] = b.Add(std::move(copy));
    }
    return absl::OkStatus();
  }

  // The computations that were cloned (to drop once nothing calls them).
  std::vector<Computation*> originals() const {
    std::vector<Computation*> out;
    for (const auto& [original, clone] : clones_) out.push_back(original);
    return out;
  }

 private:
  absl::StatusOr<Computation*> Clone(Computation& callee) {
    auto it = clones_.find(&callee);
    if (it != clones_.end()) return it->second;
    std::string name = absl::StrCat(callee.name(), ".manual");
    for (int k = 1; module_.FindComputation(name) != nullptr; ++k) {
      name = absl::StrCat(callee.name(), ".manual.", k);
    }
    Computation* clone = module_.AddComputation(std::make_unique<Computation>(name));
    clones_[&callee] = clone;
    LocalBuilder b(context_, *clone);
    ValueMap value;
    for (int64_t i = 0; i < callee.num_parameters(); ++i) {
      const Instruction* p = callee.parameter(i);
      auto param = Instruction::CreateParameter(i, p->name(), p->shape());
      param->set_location(p->location());
      value[p] = b.Add(std::move(param));
    }
    RETURN_IF_ERROR(Copy(callee, b, value));
    clone->set_root(value.at(callee.root()));
    for (Instruction* inst : clone->instructions()) inst->set_sharding(ManualLike(inst->shape()));
    clone->SortInDefinitionOrder();
    return clone;
  }

  hlo::Module& module_;
  PartitionContext& context_;
  ManualMesh mesh_;
  const Instruction& shard_map_;
  absl::flat_hash_map<Computation*, Computation*> clones_;
};

absl::Status LowerOne(hlo::Module& module, Computation& caller, Instruction* shard_map,
                      PartitionContext& context, std::vector<Computation*>& replaced) {
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
  context.num_devices = mesh.num_devices();
  LocalBuilder b(context, caller);
  RegionCopier copier(module, context, mesh, *shard_map);
  absl::flat_hash_set<const Instruction*> boundary;
  absl::flat_hash_set<const Instruction*> existing;
  for (const Instruction* inst : caller.instructions()) existing.insert(inst);

  ValueMap value;
  for (int64_t i = 0; i < shard_map->operand_count(); ++i) {
    Instruction* x = shard_map->operand(i);
    const hlo::AxisSpec& spec = in_specs[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(hlo::Sharding sharding, SpecSharding(mesh, spec, x->shape().rank()));
    ASSIGN_OR_RETURN(Shape local, hlo::LocalShape(x->shape(), spec, mesh));
    Instruction* annotated = CustomCall(b, x, x->shape(), std::string(hlo::kShardingTarget), sharding);
    boundary.insert(annotated);
    value[body->parameter(i)] = CustomCall(b, annotated, local, std::string(hlo::kFullToShardShapeTarget),
                                           hlo::Sharding::Manual());
  }
  RETURN_IF_ERROR(copier.Copy(*body, b, value));
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
    Instruction* full = CustomCall(b, leaf, global, std::string(hlo::kShardToFullShapeTarget), sharding);
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
  replaced.push_back(body);
  for (Computation* original : copier.originals()) replaced.push_back(original);
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
  std::vector<Computation*> replaced;
  for (auto& [caller, shard_map] : sites) {
    RETURN_IF_ERROR(LowerOne(module, *caller, shard_map, context, replaced));
  }
  // Bodies and the callees they were copied from go once nothing calls
  // them; a callee also called from outside a shard_map stays. Removing one
  // can leave another uncalled, hence the repeat.
  for (bool removed = true; removed;) {
    removed = false;
    for (Computation*& c : replaced) {
      if (c == nullptr) continue;
      bool listed = false;
      for (const Computation* m : module.computations()) listed = listed || m == c;
      if (!listed) {
        c = nullptr;
      } else if (!CalledBySomething(module, c)) {
        module.RemoveComputation(c);
        c = nullptr;
        removed = true;
      }
    }
  }
  module.SortCalleesFirst();
  return absl::OkStatus();
}

}  // namespace sharc::spmd
