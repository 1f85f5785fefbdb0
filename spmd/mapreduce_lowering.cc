#include "spmd/mapreduce_lowering.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/vmap.h"
#include "hlo/ir/fresh_name.h"
#include "hlo/ir/scalar_reducer.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_util.h"
#include "spmd/mesh.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::FreshName;
using hlo::Instruction;
using hlo::Literal;
using hlo::Module;
using hlo::OpError;
using hlo::Opcode;
using hlo::Shape;
using hlo::Sharding;

namespace {

bool IsBlock(Opcode opcode) {
  return opcode == Opcode::kMapReduceBroadcast || opcode == Opcode::kMapReduceMap ||
         opcode == Opcode::kMapReduceSum || opcode == Opcode::kMapReduceMean;
}

int64_t GroupCount(const Instruction& block) {
  if (block.opcode() == Opcode::kMapReduceBroadcast) return block.shape().dim(0);
  return block.operand(0)->shape().dim(0);
}

// Computations run by a map for each group (its to_apply and their callees).
absl::flat_hash_set<const Computation*> MapBodies(const Module& module) {
  absl::flat_hash_set<const Computation*> bodies;
  std::vector<const Computation*> work;
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kMapReduceMap) work.push_back(inst->attr_computation("to_apply"));
    }
  }
  while (!work.empty()) {
    const Computation* comp = work.back();
    work.pop_back();
    if (comp == nullptr || !bodies.insert(comp).second) continue;
    for (const Instruction* inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) work.push_back(callee);
    }
  }
  return bodies;
}

// The mesh the placements refer to: the header's, or (with none declared) a
// one-axis mesh named after the only placement, spanning every device.
absl::StatusOr<std::optional<Mesh>> PlacementMesh(const Module& module,
                                                  const std::map<std::string, int64_t>& groups) {
  const hlo::ModuleConfig& config = module.config();
  if (!config.mesh.empty()) {
    ASSIGN_OR_RETURN(Mesh mesh, Mesh::Create(config.mesh));
    return std::optional<Mesh>(mesh);
  }
  if (config.num_partitions > 1 && groups.size() == 1) {
    return std::optional<Mesh>(Mesh::OneDimensional(groups.begin()->first, config.num_partitions));
  }
  return std::optional<Mesh>();
}

class Lowering {
 public:
  Lowering(Module& module, MapReduceMode mode, std::optional<Mesh> mesh)
      : module_(module), mode_(mode), mesh_(std::move(mesh)) {}

  absl::Status Lower(Instruction* block) {
    comp_ = block->parent();
    block_ = block;
    const std::string name = block->name();
    // The lowered value takes over the block's name, so a reader (and
    // `--explain`) can follow it.
    block->set_name(FreshName(*comp_, name + ".block"));
    Instruction* lowered = nullptr;
    switch (block->opcode()) {
      case Opcode::kMapReduceBroadcast: {
        ASSIGN_OR_RETURN(lowered, LowerBroadcast(name));
        break;
      }
      case Opcode::kMapReduceMap: {
        ASSIGN_OR_RETURN(lowered, LowerMap(name));
        break;
      }
      default: {
        ASSIGN_OR_RETURN(lowered, LowerReduction(name));
        break;
      }
    }
    block->ReplaceAllUsesWith(lowered);
    return comp_->RemoveInstruction(block);
  }

 private:
  // One device needs no constraints (and a header mesh may name more
  // devices than a single-device run uses).
  bool Annotate() const {
    return mode_ == MapReduceMode::kAnnotated && mesh_.has_value() &&
           module_.config().num_partitions > 1;
  }
  const std::string& Placement() const { return block_->attr_string("placement"); }

  Instruction* Add(Opcode opcode, const std::string& name, Shape shape,
                   std::vector<Instruction*> operands) {
    auto inst = Instruction::Create(opcode, FreshName(*comp_, name), std::move(shape),
                                    std::move(operands));
    inst->set_location(block_->location());
    inst->mutable_metadata() = block_->metadata();
    return comp_->AddInstructionBefore(std::move(inst), block_);
  }

  Instruction* AddConstant(const std::string& name, Literal literal) {
    auto inst = Instruction::CreateConstant(FreshName(*comp_, name), std::move(literal));
    inst->set_location(block_->location());
    return comp_->AddInstructionBefore(std::move(inst), block_);
  }

  // P(placement, UNCONSTRAINED, ...): the group dim on the placement's mesh
  // axis, the other dims left to propagation (DrJAX's constraint).
  absl::StatusOr<Instruction*> Constrain(Instruction* value, const std::string& name) {
    const int64_t rank = value->shape().rank();
    ASSIGN_OR_RETURN(Sharding sharding,
                     ToSharding(*mesh_, PartitionSpec({{Placement()}}), rank));
    Instruction* c = Add(Opcode::kCustomCall, name, value->shape(), {value});
    c->set_attr("custom_call_target", std::string(hlo::kShardingTarget));
    if (rank > 1) {
      std::vector<int64_t> open;
      for (int64_t d = 1; d < rank; ++d) open.push_back(d);
      c->set_attr("backend_config",
                  absl::StrCat("unspecified_dims=[", absl::StrJoin(open, ","), "]"));
    }
    c->set_sharding(sharding);
    return c;
  }

  absl::StatusOr<Instruction*> LowerBroadcast(const std::string& name) {
    Instruction* x = block_->operand(0);
    const bool annotate = Annotate();
    Instruction* b = Add(Opcode::kBroadcast, annotate ? name + ".broadcast" : name,
                         block_->shape(), {x});
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < x->shape().rank(); ++d) dims.push_back(d + 1);
    b->set_attr("dimensions", dims);
    if (!annotate) return b;
    return Constrain(b, name);
  }

  absl::StatusOr<Instruction*> LowerReduction(const std::string& name) {
    Instruction* x = block_->operand(0);
    const hlo::PrimitiveType type = x->shape().type();
    const bool mean = block_->opcode() == Opcode::kMapReduceMean;
    Instruction* zero = AddConstant(name + ".zero", Literal(Shape::Scalar(type)));
    Instruction* sum = Add(Opcode::kReduce, mean ? name + ".sum" : name, block_->shape(), {x, zero});
    sum->set_attr("dimensions", std::vector<int64_t>{0});
    sum->set_attr("to_apply", hlo::BinaryReducer(module_, Opcode::kAdd, type));
    if (!mean) return sum;
    Literal n(Shape::Scalar(type));
    n.SetFromDouble(0, static_cast<double>(GroupCount(*block_)));
    Instruction* count = AddConstant(name + ".groups", std::move(n));
    Instruction* counts = Add(Opcode::kBroadcast, name + ".groups.broadcast", block_->shape(), {count});
    counts->set_attr("dimensions", std::vector<int64_t>{});
    return Add(Opcode::kDivide, name, block_->shape(), {sum, counts});
  }

  absl::StatusOr<Instruction*> LowerMap(const std::string& name) {
    if (mode_ == MapReduceMode::kLoop) return LowerMapAsLoop(name);
    const Computation& f = *block_->attr_computation("to_apply");
    std::vector<Instruction*> args;
    for (int64_t i = 0; i < block_->operand_count(); ++i) {
      Instruction* arg = block_->operand(i);
      if (Annotate()) {
        ASSIGN_OR_RETURN(arg, Constrain(arg, absl::StrCat(name, ".arg", i)));
      }
      args.push_back(arg);
    }
    ASSIGN_OR_RETURN(Computation * vectorised, Vectorised(f));
    const Shape& shape = block_->shape();
    const bool annotate = Annotate();
    Instruction* call = Add(Opcode::kCall, annotate || shape.is_tuple() ? name + ".call" : name,
                            shape, args);
    call->set_attr("to_apply", vectorised);
    if (!annotate) return call;
    if (!shape.is_tuple()) return Constrain(call, name);
    std::vector<Instruction*> leaves;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      Instruction* leaf = Add(Opcode::kGetTupleElement, absl::StrCat(name, ".", i),
                              shape.tuple_shape(i), {call});
      leaf->set_attr("index", i);
      ASSIGN_OR_RETURN(leaf, Constrain(leaf, absl::StrCat(name, ".out", i)));
      leaves.push_back(leaf);
    }
    return Add(Opcode::kTuple, name, shape, leaves);
  }

  // f vectorised over the groups, once per body. In annotated mode sharding
  // constraints inside f get the placement axis prefixed (JAX's
  // spmd_axis_name), so they keep meaning "per group" after vectorising.
  absl::StatusOr<Computation*> Vectorised(const Computation& f) {
    auto it = vectorised_.find(&f);
    if (it != vectorised_.end()) return it->second;
    hlo::VmapOptions options;
    if (Annotate()) {
      const Mesh mesh = *mesh_;
      const std::string placement = Placement();
      options.batch_sharding = [mesh, placement](const Sharding& inner,
                                                 const Shape& batched) -> absl::StatusOr<Sharding> {
        const int64_t rank = batched.rank();
        std::vector<std::vector<std::string>> dims = {{placement}};
        if (!inner.IsReplicated()) {
          absl::StatusOr<PartitionSpec> spec = ToPartitionSpec(mesh, inner, rank - 1);
          if (!spec.ok()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "a sharding inside a mapreduce.map body must be a layout over mesh ",
                mesh.ToString(), " to get the placement axis '", placement,
                "' prefixed: ", spec.status().message()));
          }
          for (const auto& axes : spec->dims()) {
            for (const std::string& axis : axes) {
              if (axis == placement) {
                return absl::InvalidArgumentError(absl::StrCat(
                    "a sharding inside a mapreduce.map body uses mesh axis '", placement,
                    "', which the map's groups already occupy (", spec->ToString(), ")"));
              }
            }
            dims.push_back(axes);
          }
        }
        return ToSharding(mesh, PartitionSpec(dims), rank);
      };
    }
    // Every argument of a map is placed (absl::Span cannot view a
    // std::vector<bool>).
    const size_t arity = static_cast<size_t>(f.num_parameters());
    std::unique_ptr<bool[]> batched(new bool[arity]);
    std::fill(batched.get(), batched.get() + arity, true);
    absl::StatusOr<Computation*> vectorised =
        hlo::Vmap(module_, f, absl::MakeConstSpan(batched.get(), arity), GroupCount(*block_),
                  f.name() + ".vectorised", options);
    if (!vectorised.ok()) {
      return absl::Status(vectorised.status().code(),
                          absl::StrCat("cannot vectorise the body of ", block_->Describe(), ": ",
                                       vectorised.status().message()));
    }
    vectorised_[&f] = *vectorised;
    return *vectorised;
  }

  // The naive baseline: slice out each group, call f on it, and stack the
  // results back, one call per group.
  absl::StatusOr<Instruction*> LowerMapAsLoop(const std::string& name) {
    Computation* f = block_->attr_computation("to_apply");
    const int64_t groups = GroupCount(*block_);
    const Shape& shape = block_->shape();
    const Shape& f_shape = f->root()->shape();
    const int64_t leaf_count = shape.is_tuple() ? shape.tuple_size() : 1;
    std::vector<std::vector<Instruction*>> stacked(static_cast<size_t>(leaf_count));
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<Instruction*> slices;
      for (int64_t i = 0; i < block_->operand_count(); ++i) {
        Instruction* operand = block_->operand(i);
        const Shape& full = operand->shape();
        std::vector<std::vector<int64_t>> bounds = {{g, g + 1, 1}};
        Shape one = full;
        one.mutable_dims()[0] = 1;
        for (int64_t d = 1; d < full.rank(); ++d) bounds.push_back({0, full.dim(d), 1});
        Instruction* slice = Add(Opcode::kSlice, absl::StrCat(name, ".g", g, ".arg", i), one, {operand});
        slice->set_attr("slice", bounds);
        std::vector<int64_t> inner(full.dims().begin() + 1, full.dims().end());
        slices.push_back(Add(Opcode::kReshape, absl::StrCat(name, ".g", g, ".in", i),
                             Shape(full.type(), inner), {slice}));
      }
      Instruction* call = Add(Opcode::kCall, absl::StrCat(name, ".g", g), f_shape, slices);
      call->set_attr("to_apply", f);
      for (int64_t leaf = 0; leaf < leaf_count; ++leaf) {
        Instruction* value = call;
        if (f_shape.is_tuple()) {
          value = Add(Opcode::kGetTupleElement, absl::StrCat(name, ".g", g, ".", leaf),
                      f_shape.tuple_shape(leaf), {call});
          value->set_attr("index", leaf);
        }
        std::vector<int64_t> dims = {1};
        dims.insert(dims.end(), value->shape().dims().begin(), value->shape().dims().end());
        stacked[static_cast<size_t>(leaf)].push_back(
            Add(Opcode::kReshape, absl::StrCat(name, ".g", g, ".out", leaf),
                Shape(value->shape().type(), dims), {value}));
      }
    }
    std::vector<Instruction*> leaves;
    for (int64_t leaf = 0; leaf < leaf_count; ++leaf) {
      const Shape& leaf_shape = shape.is_tuple() ? shape.tuple_shape(leaf) : shape;
      Instruction* concat = Add(Opcode::kConcatenate,
                                shape.is_tuple() ? absl::StrCat(name, ".", leaf) : name, leaf_shape,
                                stacked[static_cast<size_t>(leaf)]);
      concat->set_attr("dimensions", std::vector<int64_t>{0});
      leaves.push_back(concat);
    }
    if (!shape.is_tuple()) return leaves[0];
    return Add(Opcode::kTuple, name, shape, leaves);
  }

  Module& module_;
  MapReduceMode mode_;
  std::optional<Mesh> mesh_;
  Computation* comp_ = nullptr;
  Instruction* block_ = nullptr;
  absl::flat_hash_map<const Computation*, Computation*> vectorised_;
};

}  // namespace

absl::StatusOr<MapReduceMode> ParseMapReduceMode(std::string_view text) {
  if (text == "annotated") return MapReduceMode::kAnnotated;
  if (text == "ns") return MapReduceMode::kNoSharding;
  if (text == "loop") return MapReduceMode::kLoop;
  return absl::InvalidArgumentError(absl::StrCat("unknown MapReduce lowering '", std::string(text),
                                                 "'; expected annotated, ns or loop"));
}

std::string MapReduceModeName(MapReduceMode mode) {
  switch (mode) {
    case MapReduceMode::kAnnotated:
      return "annotated";
    case MapReduceMode::kNoSharding:
      return "ns";
    case MapReduceMode::kLoop:
      return "loop";
  }
  return "annotated";
}

bool HasMapReduceBlocks(const Module& module) {
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (IsBlock(inst->opcode())) return true;
    }
  }
  return false;
}

absl::StatusOr<std::map<std::string, int64_t>> CheckPlacements(const Module& module,
                                                               MapReduceMode mode) {
  std::map<std::string, int64_t> groups;
  std::map<std::string, const Instruction*> first_use;
  const absl::flat_hash_set<const Computation*> bodies = MapBodies(module);
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      if (!IsBlock(inst->opcode())) continue;
      if (bodies.contains(comp)) {
        return OpError(*inst, "is inside the body of a mapreduce.map; placements do not nest");
      }
      const std::string& placement = inst->attr_string("placement");
      const int64_t n = GroupCount(*inst);
      if (n < 1) return OpError(*inst, "needs at least one group, got ", n);
      auto [it, inserted] = groups.emplace(placement, n);
      if (inserted) {
        first_use[placement] = inst;
      } else if (it->second != n) {
        return OpError(*inst, "has ", n, " groups, but placement '", placement, "' has ",
                       it->second, " at ", first_use[placement]->Describe());
      }
    }
  }
  if (groups.empty()) return groups;
  ASSIGN_OR_RETURN(std::optional<Mesh> mesh, PlacementMesh(module, groups));
  const int64_t devices = module.config().num_partitions;
  if (mesh && !module.config().mesh.empty() && devices > 1 && mesh->num_devices() != devices) {
    return absl::InvalidArgumentError(absl::StrCat("the module's mesh ", mesh->ToString(), " has ",
                                                   mesh->num_devices(),
                                                   " devices but the program runs on ", devices));
  }
  for (const auto& [placement, n] : groups) {
    const Instruction& use = *first_use[placement];
    std::optional<int64_t> axis = mesh ? mesh->AxisIndex(placement) : std::nullopt;
    if (!axis) {
      if (mode == MapReduceMode::kAnnotated && devices > 1) {
        return OpError(use, "places values at '", placement, "', which is not an axis of the mesh ",
                       mesh ? mesh->ToString() : std::string("(none declared)"),
                       "; name the axis in the header (`HloModule m, mesh={", placement, "=",
                       devices, "}`), pass --mesh, or lower with --mapreduce-mode=ns");
      }
      continue;
    }
    const int64_t size = mesh->AxisSize(*axis);
    if (n % size != 0) {
      return OpError(use, "spreads ", n, " groups over mesh axis '", placement, "' of size ", size,
                     ", which does not divide them; use a group count that is a multiple of ",
                     size);
    }
  }
  return groups;
}

absl::Status LowerMapReduce(Module& module, MapReduceMode mode) {
  if (!HasMapReduceBlocks(module)) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto groups, CheckPlacements(module, mode));
  ASSIGN_OR_RETURN(std::optional<Mesh> mesh, PlacementMesh(module, groups));
  Lowering lowering(module, mode, std::move(mesh));
  absl::flat_hash_set<Computation*> map_bodies;
  for (Computation* comp : module.computations()) {
    for (Instruction* inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kMapReduceMap) {
        map_bodies.insert(inst->attr_computation("to_apply"));
      }
      if (IsBlock(inst->opcode())) RETURN_IF_ERROR(lowering.Lower(inst));
    }
  }
  // Bodies now only reached through their vectorised copies are dropped.
  absl::flat_hash_set<const Computation*> called;
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) called.insert(callee);
    }
  }
  for (Computation* body : map_bodies) {
    if (!called.contains(body) && body != module.entry()) module.RemoveComputation(body);
  }
  module.SortCalleesFirst();
  return absl::OkStatus();
}

}  // namespace sharc::spmd
