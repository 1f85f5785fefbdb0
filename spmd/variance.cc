#include "spmd/variance.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/device_variance.h"
#include "hlo/ops/op_util.h"
#include "hlo/ops/shard_map_attrs.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::ManualMesh;
using hlo::Opcode;
using Axes = std::vector<std::string>;

namespace {

using hlo::MinusAxes;
using hlo::UnionAxes;

std::string Braced(const Axes& axes) { return absl::StrCat("{", absl::StrJoin(axes, ","), "}"); }

class BodyTyper {
 public:
  BodyTyper(const Instruction& shard_map, hlo::Computation& body, ManualMesh mesh,
            const VarianceOptions& options)
      : shard_map_(shard_map), body_(body), mesh_(std::move(mesh)), options_(options) {}

  absl::Status Run() {
    ASSIGN_OR_RETURN(std::vector<hlo::AxisSpec> in_specs,
                     hlo::ShardMapSpecs(shard_map_, "in_specs"));
    ASSIGN_OR_RETURN(std::vector<hlo::AxisSpec> out_specs,
                     hlo::ShardMapSpecs(shard_map_, "out_specs"));
    std::vector<std::vector<Axes>> params;
    for (const hlo::AxisSpec& spec : in_specs) params.push_back({hlo::SpecAxes(spec, mesh_)});
    RETURN_IF_ERROR(TypeComputation(body_, params));
    return CheckOutputs(out_specs);
  }

 private:
  // Variance per leaf of a tuple-shaped value (one entry for an array).
  // Instruction::variance keeps the union, which is what prints.
  std::vector<Axes> Leaves(const Instruction* v) const {
    if (!v->shape().is_tuple()) return {v->variance()};
    auto it = leaves_.find(v);
    if (it != leaves_.end()) return it->second;
    return std::vector<Axes>(static_cast<size_t>(v->shape().tuple_size()), v->variance());
  }
  void SetLeaves(Instruction& v, std::vector<Axes> leaves) {
    if (!v.shape().is_tuple()) {
      v.set_variance(leaves.empty() ? Axes{} : leaves[0]);
      return;
    }
    Axes all;
    for (const Axes& leaf : leaves) all = UnionAxes(mesh_, all, leaf);
    v.set_variance(all);
    leaves_[&v] = std::move(leaves);
  }

  // Types `computation` whose parameter i has the leaf variances params[i].
  absl::Status TypeComputation(hlo::Computation& computation,
                               const std::vector<std::vector<Axes>>& params) {
    for (Instruction* param : computation.parameters()) {
      if (param == nullptr) continue;
      const size_t i = static_cast<size_t>(param->parameter_number());
      SetLeaves(*param, i < params.size() ? params[i] : std::vector<Axes>{});
    }
    // Snapshot: pbroadcasts inserted on the way are typed when created.
    for (Instruction* inst : computation.instructions()) {
      if (inst->opcode() == Opcode::kParameter) continue;
      RETURN_IF_ERROR(Type(*inst));
    }
    return absl::OkStatus();
  }

  // Makes leaf k of `value` (the root or init of a join) vary over
  // wanted[k]: through its tuple's operands, or a new root for an array.
  absl::Status LiftLeaves(Instruction& value, const std::vector<Axes>& wanted,
                          std::string_view why, hlo::Computation* root_of) {
    if (value.opcode() == Opcode::kTuple) {
      for (int64_t k = 0; k < value.operand_count(); ++k) {
        RETURN_IF_ERROR(Lift(value, k, wanted[static_cast<size_t>(k)], why));
      }
      std::vector<Axes> leaves;
      for (const Instruction* op : value.operands()) leaves.push_back(op->variance());
      SetLeaves(value, std::move(leaves));
      return absl::OkStatus();
    }
    std::vector<Axes> have = Leaves(&value);
    for (size_t k = 0; k < have.size() && k < wanted.size(); ++k) {
      Axes missing = MinusAxes(wanted[k], have[k]);
      if (missing.empty() || dry_) continue;
      if (!options_.insert_pbroadcast || !value.shape().is_array() || root_of == nullptr) {
        return hlo::OpError(value, why, ": value %", value.name(), " varies over ",
                            Braced(have[k]), " but must vary over ", Braced(wanted[k]),
                            "; apply pbroadcast(..., axes=", Braced(missing), ") to it");
      }
      root_of->set_root(Broadcast(&value, missing, nullptr, root_of));
    }
    return absl::OkStatus();
  }

  // Loop carries: iterate the body's typing until the carry's variance is a
  // fixed point (it only grows, so at most one round per axis and leaf),
  // then lift the initial carry and the body's result to it.
  absl::Status TypeWhile(Instruction& inst) {
    hlo::Computation* cond = inst.attr_computation("condition");
    hlo::Computation* body = inst.attr_computation("body");
    Instruction* init = inst.operand(0);
    std::vector<Axes> carry = Leaves(init);
    const bool was_dry = dry_;
    dry_ = true;
    for (size_t round = 0; round <= carry.size() * mesh_.axes().size() + 1; ++round) {
      RETURN_IF_ERROR(TypeComputation(*body, {carry}));
      RETURN_IF_ERROR(TypeComputation(*cond, {carry}));
      std::vector<Axes> out = Leaves(body->root());
      // A predicate that varies makes the trip count, hence every carry, vary.
      const Axes& predicate = cond->root()->variance();
      bool changed = false;
      for (size_t k = 0; k < carry.size() && k < out.size(); ++k) {
        Axes grown = UnionAxes(mesh_, UnionAxes(mesh_, carry[k], out[k]), predicate);
        changed = changed || grown != carry[k];
        carry[k] = std::move(grown);
      }
      if (!changed) break;
    }
    dry_ = was_dry;
    RETURN_IF_ERROR(LiftLeaves(*init, carry, "starts a loop carry less varying than the loop "
                                             "makes it", nullptr));
    RETURN_IF_ERROR(TypeComputation(*body, {carry}));
    RETURN_IF_ERROR(TypeComputation(*cond, {carry}));
    RETURN_IF_ERROR(LiftLeaves(*body->root(), carry, "returns a loop carry less varying than "
                                                     "its input", body));
    SetLeaves(inst, carry);
    return absl::OkStatus();
  }

  // Conditional branches join: the result varies where any branch's does,
  // and where the branch index does; every branch root is lifted to that.
  absl::Status TypeConditional(Instruction& inst) {
    std::vector<hlo::Computation*> branches = inst.called_computations();
    std::vector<Axes> result;
    for (size_t b = 0; b < branches.size(); ++b) {
      const Instruction* arg = inst.operand(static_cast<int64_t>(b) + 1);
      RETURN_IF_ERROR(TypeComputation(*branches[b], {Leaves(arg)}));
      std::vector<Axes> out = Leaves(branches[b]->root());
      if (result.empty()) result.resize(out.size());
      for (size_t k = 0; k < out.size() && k < result.size(); ++k) {
        result[k] = UnionAxes(mesh_, UnionAxes(mesh_, result[k], out[k]), inst.operand(0)->variance());
      }
    }
    for (hlo::Computation* branch : branches) {
      RETURN_IF_ERROR(LiftLeaves(*branch->root(), result, "returns a branch result less "
                                                          "varying than another branch's",
                                 branch));
    }
    SetLeaves(inst, result);
    return absl::OkStatus();
  }

  // A pbroadcast of `value` over `missing`, placed before `user` (appended
  // when `user` is null: a new root reading the old one).
  Instruction* Broadcast(Instruction* value, const Axes& missing, const Instruction* user,
                         hlo::Computation* computation = nullptr) {
    auto cast = Instruction::Create(Opcode::kPBroadcast,
                                    absl::StrCat(value->name(), ".pbroadcast.", counter_++),
                                    value->shape(), {value});
    cast->set_attr("axes", hlo::PrintAxesText(missing));
    cast->set_variance(UnionAxes(mesh_, value->variance(), missing));
    cast->set_location(user != nullptr ? user->location() : value->location());
    if (user == nullptr) return computation->AddInstruction(std::move(cast));
    return user->parent()->AddInstructionBefore(std::move(cast), user);
  }

  // Lifts operand `i` of `inst` to vary over `wanted` (a superset of its
  // variance), or reports the mismatch when insertion is off.
  absl::Status Lift(Instruction& inst, int64_t i, const Axes& wanted, std::string_view why) {
    Instruction* operand = inst.operand(i);
    Axes missing = MinusAxes(wanted, operand->variance());
    if (missing.empty() || dry_) return absl::OkStatus();
    if (!options_.insert_pbroadcast || !operand->shape().is_array()) {
      return hlo::OpError(inst, why, ": operand ", i, " (%", operand->name(), ") varies over ",
                          Braced(operand->variance()), " but must vary over ", Braced(wanted),
                          "; apply pbroadcast(%", operand->name(), "), axes=", Braced(missing),
                          " to it, or let the variance pass insert it");
    }
    inst.ReplaceOperand(i, Broadcast(operand, missing, &inst));
    return absl::OkStatus();
  }

  absl::Status Type(Instruction& inst) {
    if (const hlo::NamedCollectiveInfo* info = hlo::FindNamedCollective(inst.opcode())) {
      return TypeCollective(inst, *info);
    }
    Axes joined;
    for (const Instruction* op : inst.operands()) joined = UnionAxes(mesh_, joined, op->variance());
    // Tuples only group values: each leaf keeps its own variance (the tuple
    // as a whole has their union), and get-tuple-element gets it back.
    if (inst.opcode() == Opcode::kTuple) {
      std::vector<Axes> leaves;
      for (const Instruction* op : inst.operands()) leaves.push_back(op->variance());
      SetLeaves(inst, std::move(leaves));
      return absl::OkStatus();
    }
    if (inst.opcode() == Opcode::kGetTupleElement) {
      std::vector<Axes> leaves = Leaves(inst.operand(0));
      const size_t k = static_cast<size_t>(inst.attr_int("index"));
      inst.set_variance(k < leaves.size() ? leaves[k] : joined);
      return absl::OkStatus();
    }
    if (inst.opcode() == Opcode::kWhile) return TypeWhile(inst);
    if (inst.opcode() == Opcode::kConditional) return TypeConditional(inst);
    if (inst.opcode() == Opcode::kCall) {
      std::vector<std::vector<Axes>> args;
      for (const Instruction* op : inst.operands()) args.push_back(Leaves(op));
      hlo::Computation* callee = inst.attr_computation("to_apply");
      RETURN_IF_ERROR(TypeComputation(*callee, args));
      SetLeaves(inst, Leaves(callee->root()));
      return absl::OkStatus();
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      RETURN_IF_ERROR(Lift(inst, i, joined, "combines operands of different device variance"));
    }
    // Other callees (reducers, sort comparators) are scalar functions of
    // the operands; any axis_index inside them still counts, and
    // partition-id varies over the whole mesh.
    inst.set_variance(UnionAxes(mesh_, joined, hlo::OwnVariance(inst, mesh_)));
    return absl::OkStatus();
  }

  absl::Status TypeCollective(Instruction& inst, const hlo::NamedCollectiveInfo& info) {
    ASSIGN_OR_RETURN(Axes axes, hlo::CollectiveAxes(inst, mesh_));
    axes = UnionAxes(mesh_, axes, {});
    if (info.effect == hlo::VarianceEffect::kSource) {
      inst.set_variance(hlo::CollectiveVariance(info, mesh_, {}, axes));
      return absl::OkStatus();
    }
    const Axes in = inst.operand(0)->variance();
    if (info.operand == hlo::OperandVariance::kVarying) {
      RETURN_IF_ERROR(Lift(inst, 0, UnionAxes(mesh_, in, axes),
                           "needs an operand varying over its axes"));
    } else if (info.operand == hlo::OperandVariance::kInvariant) {
      const Axes already = MinusAxes(axes, MinusAxes(axes, in));  // axes ∩ in
      if (!already.empty() && !dry_) {
        return hlo::OpError(inst, "casts to varying over ", Braced(already),
                            " but its operand already varies over them; drop those axes");
      }
    }
    inst.set_variance(hlo::CollectiveVariance(info, mesh_, inst.operand(0)->variance(), axes));
    return absl::OkStatus();
  }

  // Output k's value: a leaf of a root tuple, or the root itself.
  absl::Status CheckOutputs(const std::vector<hlo::AxisSpec>& out_specs) {
    Instruction* root = body_.root();
    // A tuple-shaped root other than a tuple instruction (a loop's result)
    // is checked as a whole, conservatively.
    const bool tuple = root->opcode() == Opcode::kTuple;
    const std::vector<Axes> leaves = Leaves(root);
    for (size_t k = 0; k < out_specs.size(); ++k) {
      Instruction* value = tuple ? root->operand(static_cast<int64_t>(k)) : root;
      const Axes varying = root->shape().is_tuple() && k < leaves.size() ? leaves[k]
                                                                         : value->variance();
      Axes allowed = hlo::SpecAxes(out_specs[k], mesh_);
      Axes extra = MinusAxes(varying, allowed);
      if (!extra.empty()) {
        const Axes all = hlo::AllAxes(mesh_);
        return absl::InvalidArgumentError(absl::StrCat(
            "shard_map %", shard_map_.name(), ": out_specs[", k, "] is ",
            hlo::PrintSpecText(out_specs[k]),
            " which implies that the output value is only varying across mesh axes ",
            Braced(allowed), " and not ", Braced(MinusAxes(all, allowed)),
            ", but it was inferred to be possibly varying over ",
            Braced(varying), "; psum (or all_gather_invariant) it over ",
            Braced(extra), ", name those axes in the out_spec, or pass check_variance=false"));
      }
      // JAX's implicit fan-out: the output is cast up to what its spec says.
      Axes missing = MinusAxes(allowed, varying);
      if (missing.empty() || !options_.insert_pbroadcast || !value->shape().is_array()) continue;
      if (tuple) {
        root->ReplaceOperand(static_cast<int64_t>(k), Broadcast(value, missing, root));
      } else {
        body_.set_root(Broadcast(value, missing, nullptr, &body_));
      }
    }
    return absl::OkStatus();
  }

  const Instruction& shard_map_;
  hlo::Computation& body_;
  ManualMesh mesh_;
  const VarianceOptions& options_;
  int64_t counter_ = 0;
  absl::flat_hash_map<const Instruction*, std::vector<Axes>> leaves_;
  // While a loop's carry is being solved for, typing changes nothing: no
  // pbroadcast is inserted and no error reported until the final pass.
  bool dry_ = false;
};

}  // namespace

absl::Status InferShardMapVariance(Instruction& shard_map, const VarianceOptions& options) {
  if (shard_map.opcode() != Opcode::kShardMap) {
    return hlo::OpError(shard_map, "is not a shard_map");
  }
  hlo::Computation* body = shard_map.attr_computation("to_apply");
  if (body == nullptr) return hlo::OpError(shard_map, "needs a to_apply body");
  if (!shard_map.attr_bool("check_variance", true)) {
    for (Instruction* v : body->instructions()) v->set_variance({});
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(ManualMesh mesh, hlo::ShardMapMesh(shard_map));
  BodyTyper typer(shard_map, *body, std::move(mesh), options);
  return typer.Run();
}

absl::Status InferDeviceVariance(hlo::Module& module, const VarianceOptions& options) {
  for (hlo::Computation* computation : module.computations()) {
    for (Instruction* inst : computation->instructions()) {
      if (inst->opcode() != Opcode::kShardMap) continue;
      RETURN_IF_ERROR(InferShardMapVariance(*inst, options));
    }
  }
  return absl::OkStatus();
}

}  // namespace sharc::spmd
