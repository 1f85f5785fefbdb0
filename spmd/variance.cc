#include "spmd/variance.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/analysis/device_variance_analysis.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/device_variance.h"
#include "hlo/ops/op_def.h"
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

// Types one shard_map body: the shared analysis gives every value's
// variance; this pass then makes the program agree with it, inserting a
// pbroadcast wherever an op combines values of different variance, a
// collective needs a varying operand, or data flow joins values (a loop
// carry and its initial value and step, branch results: any target with
// several sources or a control, hlo/ops/data_flow.h).
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
    std::vector<hlo::LeafVariance> params;
    for (const hlo::AxisSpec& spec : in_specs) params.push_back({hlo::SpecAxes(spec, mesh_)});
    ASSIGN_OR_RETURN(analysis_, hlo::DeviceVarianceAnalysis::Run(body_, params, mesh_));
    RETURN_IF_ERROR(Rewrite(body_, 0));
    return CheckOutputs(out_specs);
  }

 private:
  // Variance per leaf of a tuple-shaped value (one entry for an array).
  // Instruction::variance keeps the union, which is what prints.
  std::vector<Axes> Leaves(const Instruction* v) const {
    if (!v->shape().is_tuple()) return {v->variance()};
    if (v->opcode() == Opcode::kTuple) {
      std::vector<Axes> leaves;
      for (const Instruction* op : v->operands()) leaves.push_back(op->variance());
      return leaves;
    }
    if (analysis_->Has(v)) return analysis_->Leaves(v);
    return std::vector<Axes>(static_cast<size_t>(v->shape().tuple_size()), v->variance());
  }

  // Writes the analysis into `computation`, then lifts what must be lifted,
  // in program order (callees where their caller is).
  absl::Status Rewrite(hlo::Computation& computation, int depth) {
    if (depth > 64) {
      return absl::InvalidArgumentError(
          absl::StrCat("computation '", computation.name(), "' calls itself too deeply"));
    }
    for (Instruction* inst : computation.instructions()) {
      if (analysis_->Has(inst)) inst->set_variance(analysis_->Of(inst));
    }
    // Snapshot: pbroadcasts inserted on the way are typed when created.
    for (Instruction* inst : computation.instructions()) {
      if (inst->opcode() == Opcode::kParameter) continue;
      if (const hlo::NamedCollectiveInfo* info = hlo::FindNamedCollective(inst->opcode())) {
        RETURN_IF_ERROR(CheckCollective(*inst, *info));
        continue;
      }
      const hlo::DataFlowFn& flow = hlo::GetOpDef(inst->opcode()).data_flow;
      if (flow) {
        RETURN_IF_ERROR(RewriteJoins(*inst, flow(*inst), depth));
        continue;
      }
      Axes joined;
      for (const Instruction* op : inst->operands()) joined = UnionAxes(mesh_, joined, op->variance());
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        RETURN_IF_ERROR(Lift(*inst, i, joined, "combines operands of different device variance"));
      }
    }
    return absl::OkStatus();
  }

  // The variance a whole-value target has (a parameter of a callee, or the
  // result).
  std::vector<Axes> TargetLeaves(const Instruction& inst, const hlo::FlowPoint& target) const {
    if (target.kind == hlo::FlowPoint::Kind::kParameter) {
      return analysis_->Leaves(target.computation->parameter(target.number));
    }
    return analysis_->Leaves(&inst);
  }

  // Why a source falls short of its target, in the words of the join it is.
  static std::string_view Why(const hlo::DataFlow& flow, const hlo::FlowEdge& edge) {
    const hlo::FlowPoint& to = edge.target;
    bool loop = false;
    int64_t roots_in = 0;
    for (const hlo::FlowEdge& e : flow.edges) {
      if (e.source.kind != hlo::FlowPoint::Kind::kRoot) continue;
      loop = loop || (to.kind == hlo::FlowPoint::Kind::kParameter &&
                      e.source.computation == to.computation && e.target.kind == to.kind &&
                      e.target.computation == to.computation);
      roots_in += e.target.kind == to.kind && e.target.computation == to.computation ? 1 : 0;
    }
    if (edge.source.kind == hlo::FlowPoint::Kind::kOperand) {
      return loop ? "starts a loop carry less varying than the loop makes it"
                  : "passes a value less varying than where it flows";
    }
    if (to.kind == hlo::FlowPoint::Kind::kParameter) {
      return edge.source.computation == to.computation
                 ? "returns a loop carry less varying than its input"
                 : "returns a value less varying than where it flows";
    }
    return roots_in > 1 ? "returns a branch result less varying than another branch's"
                        : "returns a result less varying than its caller's";
  }

  // Data flow joins: every whole-value source is lifted to its target's
  // variance (a no-op for a target with one source and no control).
  // Operands first, then the callees, then their roots.
  absl::Status RewriteJoins(Instruction& inst, const hlo::DataFlow& flow, int depth) {
    std::vector<hlo::Computation*> callees;
    for (const hlo::FlowEdge& edge : flow.edges) {
      for (const hlo::FlowPoint* p : {&edge.source, &edge.target}) {
        auto* c = const_cast<hlo::Computation*>(p->computation);  // the op's own callee
        if (c != nullptr && absl::c_find(callees, c) == callees.end()) callees.push_back(c);
      }
    }
    auto whole = [](const hlo::FlowEdge& e) {
      return e.source.leaf.empty() && e.target.leaf.empty();
    };
    for (const hlo::FlowEdge& edge : flow.edges) {
      if (edge.source.kind != hlo::FlowPoint::Kind::kOperand || !whole(edge)) continue;
      RETURN_IF_ERROR(LiftOperand(inst, edge.source.number, TargetLeaves(inst, edge.target),
                                  Why(flow, edge)));
    }
    for (hlo::Computation* callee : callees) RETURN_IF_ERROR(Rewrite(*callee, depth + 1));
    for (const hlo::FlowEdge& edge : flow.edges) {
      if (edge.source.kind != hlo::FlowPoint::Kind::kRoot || !whole(edge)) continue;
      auto* callee = const_cast<hlo::Computation*>(edge.source.computation);
      RETURN_IF_ERROR(
          LiftLeaves(*callee->root(), TargetLeaves(inst, edge.target), Why(flow, edge), callee));
    }
    if (analysis_->Has(&inst)) inst.set_variance(analysis_->Of(&inst));
    return absl::OkStatus();
  }

  // Lifts operand `i` of `inst` (a whole value flowing into a join) to
  // vary per leaf as `wanted`.
  absl::Status LiftOperand(Instruction& inst, int64_t i, const std::vector<Axes>& wanted,
                           std::string_view why) {
    Instruction* operand = inst.operand(i);
    if (operand->shape().is_tuple() || wanted.size() != 1) {
      return LiftLeaves(*operand, wanted, why, nullptr);
    }
    return Lift(inst, i, wanted[0], why);
  }

  // Makes leaf k of `value` (the root or init of a join) vary over
  // wanted[k]: through its tuple's operands, or a new root for an array.
  absl::Status LiftLeaves(Instruction& value, const std::vector<Axes>& wanted,
                          std::string_view why, hlo::Computation* root_of) {
    if (value.opcode() == Opcode::kTuple) {
      for (int64_t k = 0; k < value.operand_count() && k < std::ssize(wanted); ++k) {
        RETURN_IF_ERROR(Lift(value, k, wanted[static_cast<size_t>(k)], why));
      }
      Axes all;
      for (const Instruction* op : value.operands()) all = UnionAxes(mesh_, all, op->variance());
      value.set_variance(all);
      return absl::OkStatus();
    }
    std::vector<Axes> have = Leaves(&value);
    for (size_t k = 0; k < have.size() && k < wanted.size(); ++k) {
      Axes missing = MinusAxes(wanted[k], have[k]);
      if (missing.empty()) continue;
      if (!options_.insert_pbroadcast || !value.shape().is_array() || root_of == nullptr) {
        return hlo::OpError(value, why, ": value %", value.name(), " varies over ",
                            Braced(have[k]), " but must vary over ", Braced(wanted[k]),
                            "; apply pbroadcast(..., axes=", Braced(missing), ") to it");
      }
      root_of->set_root(Broadcast(&value, missing, nullptr, root_of));
    }
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
    if (missing.empty()) return absl::OkStatus();
    if (!options_.insert_pbroadcast || !operand->shape().is_array()) {
      return hlo::OpError(inst, why, ": operand ", i, " (%", operand->name(), ") varies over ",
                          Braced(operand->variance()), " but must vary over ", Braced(wanted),
                          "; apply pbroadcast(%", operand->name(), "), axes=", Braced(missing),
                          " to it, or let the variance pass insert it");
    }
    inst.ReplaceOperand(i, Broadcast(operand, missing, &inst));
    return absl::OkStatus();
  }

  // A collective needs its operand varying over its axes (pvary-like
  // casts: not yet varying over them).
  absl::Status CheckCollective(Instruction& inst, const hlo::NamedCollectiveInfo& info) {
    if (info.effect == hlo::VarianceEffect::kSource) return absl::OkStatus();
    ASSIGN_OR_RETURN(Axes axes, hlo::CollectiveAxes(inst, mesh_));
    axes = UnionAxes(mesh_, axes, {});
    const Axes in = inst.operand(0)->variance();
    if (info.operand == hlo::OperandVariance::kVarying) {
      RETURN_IF_ERROR(Lift(inst, 0, UnionAxes(mesh_, in, axes),
                           "needs an operand varying over its axes"));
    } else if (info.operand == hlo::OperandVariance::kInvariant) {
      const Axes already = MinusAxes(axes, MinusAxes(axes, in));  // axes ∩ in
      if (!already.empty()) {
        return hlo::OpError(inst, "casts to varying over ", Braced(already),
                            " but its operand already varies over them; drop those axes");
      }
    }
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
  std::optional<hlo::DeviceVarianceAnalysis> analysis_;
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
