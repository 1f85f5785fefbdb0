// JVP rules of shard_map and its named-axis collectives.
//
// The collectives other than pmax/pmin are linear, so a tangent goes through
// the same collective (psum of the tangents, all_gather of the tangents...);
// axis_index is an integer and has none. pmax's tangent is the tangent of
// the devices holding the maximum, averaged over ties (as `maximum` splits
// ties evenly).
//
// shard_map runs the body's derivative per device with the same specs,
// extended to the tangents. In forward mode that is one shard_map of the
// body's JVP. Linearizing splits it in two (JAX's partial evaluation of
// shard_map): a primal shard_map that also returns the residuals each
// device's linear part reads, and a tangent shard_map of the linear part.
// How residuals cross between them is shard_map_residuals.h: the tangent
// body stays typed, its values varying exactly where their primal
// counterparts do.
#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "autodiff/linearizer.h"
#include "autodiff/shard_map_region.h"
#include "autodiff/shard_map_residuals.h"
#include "autodiff/shard_map_variance.h"
#include "autodiff/transpose_naming.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

// ------------------------------------------------------------ pmax, pmin --

absl::StatusOr<Instruction*> ExtremumTangent(const Instruction& inst, const JvpArgs& args,
                                             JvpContext& ctx) {
  Emitter& p = ctx.primal();
  Instruction* x = args.primals[0];
  const std::string& axes = inst.attr_string("axes");
  const Shape& shape = x->shape();
  // The result is invariant over the axes and x varies: cast it back so the
  // comparison stays typed.
  Instruction* extremum = EmitCollective(p, Opcode::kPBroadcast, shape, args.result, axes);
  Instruction* hit = Cmp(p, x, extremum, "EQ");
  Instruction* ties = EmitCollective(p, Opcode::kPSum, shape, Convert(p, hit, shape.type()), axes);
  Emitter& t = ctx.tangent();
  Instruction* picked = Select(t, ctx.Residual(hit), args.TangentOrZeros(ctx, 0), Zeros(t, shape));
  return Div(t, EmitCollective(t, Opcode::kPSum, shape, picked, axes), ctx.Residual(ties));
}

// -------------------------------------------------------------- shard_map --

std::vector<Axes> ParamAxes(const ShardMapSignature& sig, const std::vector<size_t>& which) {
  std::vector<Axes> out;
  for (size_t i : which) out.push_back(hlo::SpecAxes(sig.in_specs[i], sig.mesh));
  return out;
}

// Element k of a body result (the value itself for an array).
Instruction* ElementOf(Emitter& e, Instruction* value, bool tuple, int64_t k) {
  return tuple ? Gte(e, value, k) : value;
}

absl::Status AnnotateBody(Computation& body, const std::vector<Axes>& params,
                          const ShardMapSignature& sig) {
  if (!sig.checked) return absl::OkStatus();
  ASSIGN_OR_RETURN(BodyVariance variance, BodyVariance::Infer(body, params, sig.mesh));
  variance.Annotate(body);
  return absl::OkStatus();
}

// Splits the shard_map's outputs (and, in forward mode, tangents) out of
// the joint shard_map `joint` whose elements from `first` on are them.
Instruction* Outputs(Emitter& e, Instruction* joint, int64_t first, size_t count, bool tuple) {
  if (!tuple) return Gte(e, joint, first);
  std::vector<Instruction*> elements;
  for (size_t k = 0; k < count; ++k) {
    elements.push_back(Gte(e, joint, first + static_cast<int64_t>(k)));
  }
  return Tuple(e, std::move(elements));
}

// Forward mode: one shard_map computing (y..., dy...) per device.
absl::StatusOr<JvpValue> ForwardShardMap(const Instruction& inst, const JvpArgs& args,
                                         JvpContext& ctx, const ShardMapSignature& sig) {
  const Computation& body = *inst.attr_computation("to_apply");
  const bool tuple = inst.shape().is_tuple();
  const size_t outputs = sig.out_specs.size();
  Emitter& e = ctx.primal();
  Computation* jvp = NewComputation(ModuleOf(e), body.name() + ".jvp");
  Emitter je(jvp);
  std::vector<Instruction*> xs;
  std::vector<Instruction*> ts(args.tangents.size(), nullptr);
  std::vector<size_t> order;
  for (int64_t i = 0; i < body.num_parameters(); ++i) {
    const Instruction* param = body.parameter(i);
    xs.push_back(je.Add(Instruction::CreateParameter(i, param->name(), param->shape()), true));
    order.push_back(static_cast<size_t>(i));
  }
  std::vector<Instruction*> operands = args.primals;
  std::vector<hlo::AxisSpec> in_specs = sig.in_specs;
  int64_t number = body.num_parameters();
  for (size_t i = 0; i < args.tangents.size(); ++i) {
    if (args.tangents[i] == nullptr) continue;
    const Instruction* param = body.parameter(static_cast<int64_t>(i));
    ts[i] = je.Add(Instruction::CreateParameter(number++, absl::StrCat("tangent.", param->name()),
                                                param->shape()),
                   true);
    operands.push_back(args.tangents[i]);
    in_specs.push_back(sig.in_specs[i]);
    order.push_back(i);
  }
  Linearizer linearizer(je, je, /*split=*/false);
  ASSIGN_OR_RETURN(JvpValue root, linearizer.Run(body, xs, ts));
  je.set_origin(body.root());
  std::vector<Instruction*> elements;
  for (size_t k = 0; k < outputs; ++k) {
    elements.push_back(ElementOf(je, root.primal, tuple, static_cast<int64_t>(k)));
  }
  for (size_t k = 0; k < outputs; ++k) {
    elements.push_back(root.tangent == nullptr
                           ? Zeros(je, sig.local_outputs[k])
                           : ElementOf(je, root.tangent, tuple, static_cast<int64_t>(k)));
  }
  jvp->set_root(Tuple(je, std::move(elements)));
  RETURN_IF_ERROR(AnnotateBody(*jvp, ParamAxes(sig, order), sig));
  std::vector<hlo::AxisSpec> out_specs = sig.out_specs;
  out_specs.insert(out_specs.end(), sig.out_specs.begin(), sig.out_specs.end());
  ASSIGN_OR_RETURN(Instruction * joint,
                   EmitShardMap(e, inst, std::move(operands), in_specs, out_specs, jvp, true));
  JvpValue out;
  out.primal = Outputs(e, joint, 0, outputs, tuple);
  out.tangent = Outputs(e, joint, static_cast<int64_t>(outputs), outputs, tuple);
  return out;
}

// Linearize mode: primal shard_map (y..., residuals...), tangent shard_map
// (tangents..., residuals...) -> dy.
absl::StatusOr<JvpValue> SplitShardMap(const Instruction& inst, const JvpArgs& args,
                                       JvpContext& ctx, const ShardMapSignature& sig) {
  const Computation& body = *inst.attr_computation("to_apply");
  const bool tuple = inst.shape().is_tuple();
  const size_t outputs = sig.out_specs.size();
  std::vector<bool> differentiable;
  std::vector<size_t> all, tangent_order;
  for (size_t i = 0; i < args.tangents.size(); ++i) {
    differentiable.push_back(args.tangents[i] != nullptr);
    all.push_back(i);
    if (args.tangents[i] != nullptr) tangent_order.push_back(i);
  }
  ASSIGN_OR_RETURN(LinearizedCallee lc, ctx.LinearizeCallee(body, differentiable));
  ASSIGN_OR_RETURN(BodyVariance primal_variance,
                   BodyVariance::Infer(*lc.primal, ParamAxes(sig, all), sig.mesh));
  const int64_t first_residual = lc.num_outputs;
  ASSIGN_OR_RETURN(ResidualCrossing residuals,
                   CrossResiduals(lc, primal_variance, static_cast<int64_t>(tangent_order.size())));
  const std::vector<hlo::AxisSpec>& residual_specs = residuals.specs;
  const std::vector<Axes>& residual_axes = residuals.axes;
  // Each tangent output is named after its output, so the transpose's
  // cotangent parameters are too (transpose_naming.h).
  const std::vector<std::string> names = ResultElementNames(body);
  Instruction* tangent_root = lc.linear->root();
  for (size_t k = 0; k < outputs; ++k) {
    if (!tuple) {
      NameCotangent(tangent_root, names[k]);
    } else if (tangent_root->opcode() == Opcode::kTuple) {
      NameCotangent(tangent_root->operand(static_cast<int64_t>(k)), names[k]);
    }
  }
  RETURN_IF_ERROR(AnnotateBody(*lc.primal, ParamAxes(sig, all), sig));
  std::vector<Axes> linear_params = ParamAxes(sig, tangent_order);
  linear_params.insert(linear_params.end(), residual_axes.begin(), residual_axes.end());
  if (sig.checked) {
    ASSIGN_OR_RETURN(BodyVariance linear_variance,
                     BodyVariance::Infer(*lc.linear, linear_params, sig.mesh));
    linear_variance.Annotate(*lc.linear);
  }

  Emitter& p = ctx.primal();
  std::vector<hlo::AxisSpec> primal_out_specs = sig.out_specs;
  for (size_t k = 0; k < residual_specs.size(); ++k) {
    if (residuals.parameter[k] < 0) primal_out_specs.push_back(residual_specs[k]);
  }
  ASSIGN_OR_RETURN(Instruction * joint, EmitShardMap(p, inst, args.primals, sig.in_specs,
                                                     primal_out_specs, lc.primal, true));
  JvpValue out;
  out.primal = Outputs(p, joint, 0, outputs, tuple);

  std::vector<Instruction*> operands;
  std::vector<hlo::AxisSpec> in_specs;
  for (size_t i : tangent_order) {
    operands.push_back(args.tangents[i]);
    in_specs.push_back(sig.in_specs[i]);
  }
  int64_t output = first_residual;
  for (size_t k = 0; k < residual_specs.size(); ++k) {
    const int64_t param = residuals.parameter[k];
    operands.push_back(ctx.Residual(param >= 0 ? args.primals[static_cast<size_t>(param)]
                                               : Gte(p, joint, output++)));
    in_specs.push_back(param >= 0 ? sig.in_specs[static_cast<size_t>(param)] : residual_specs[k]);
  }
  ASSIGN_OR_RETURN(out.tangent, EmitShardMap(ctx.tangent(), inst, std::move(operands), in_specs,
                                             sig.out_specs, lc.linear, tuple));
  return out;
}

absl::StatusOr<JvpValue> ShardMapJvp(const Instruction& inst, const JvpArgs& args,
                                     JvpContext& ctx) {
  ASSIGN_OR_RETURN(ShardMapSignature sig, ReadShardMap(inst));
  if (!ctx.split()) return ForwardShardMap(inst, args, ctx, sig);
  return SplitShardMap(inst, args, ctx, sig);
}

}  // namespace

void RegisterShardMapJvpRules(JvpRuleRegistry& r) {
  for (Opcode op : {Opcode::kPSum, Opcode::kPBroadcast, Opcode::kNamedAllGather,
                    Opcode::kNamedAllGatherInvariant, Opcode::kPSumScatter, Opcode::kPScatter,
                    Opcode::kNamedAllToAll, Opcode::kPPermute}) {
    r.Register(op, LinearIn({}));
  }
  for (Opcode op : {Opcode::kPMax, Opcode::kPMin}) r.Register(op, ExtremumTangent);
  r.RegisterZeroDerivative(Opcode::kAxisIndex);
  r.RegisterPrimalAndTangent(Opcode::kShardMap, ShardMapJvp);
}

}  // namespace sharc::autodiff
