// JVP rules of tuples, calls, conditionals and custom-calls. A call is
// differentiated inline. A conditional is linearized branch by branch: the
// primal conditional also returns every branch's residuals (zeros for the
// branches not taken, as JAX's cond does) and the tangent conditional picks
// the same branch's linear part.
#include "absl/strings/str_cat.h"
#include "autodiff/jvp_rules/linear_op.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

std::vector<Computation*> Branches(const Instruction& inst) {
  if (inst.has_attr("branch_computations")) return inst.attr_computations("branch_computations");
  return {inst.attr_computation("true_computation"), inst.attr_computation("false_computation")};
}

std::vector<hlo::Attribute> BranchAttrs(const Instruction& inst, std::vector<Computation*> bs) {
  if (inst.has_attr("branch_computations")) return {{"branch_computations", std::move(bs)}};
  return {{"true_computation", bs[0]}, {"false_computation", bs[1]}};
}

// y rebuilt from the flattened outputs of a linearized callee's primal.
Instruction* Outputs(Emitter& e, Instruction* out, const LinearizedCallee& lc) {
  if (!lc.tuple_output) return Gte(e, out, 0);
  std::vector<Instruction*> ys;
  for (int64_t i = 0; i < lc.num_outputs; ++i) ys.push_back(Gte(e, out, i));
  return Tuple(e, std::move(ys));
}

absl::StatusOr<JvpValue> ConditionalJvp(const Instruction& inst, const JvpArgs& args,
                                        JvpContext& ctx) {
  std::vector<Computation*> branches = Branches(inst);
  Module& module = ModuleOf(ctx.primal());
  std::vector<LinearizedCallee> parts;
  std::vector<Shape> slots;       // every branch's residual shapes, in order
  std::vector<int64_t> offsets;   // where branch i's residuals start
  for (size_t i = 0; i < branches.size(); ++i) {
    ASSIGN_OR_RETURN(LinearizedCallee lc, ctx.LinearizeCallee(*branches[i], {true}));
    offsets.push_back(static_cast<int64_t>(slots.size()));
    const Shape& result = lc.primal->root()->shape();
    for (int64_t k = 0; k < lc.num_residuals; ++k) {
      slots.push_back(result.tuple_shape(lc.num_outputs + k));
    }
    parts.push_back(lc);
  }
  const Shape slots_shape = Shape::Tuple(slots);
  std::vector<Computation*> primal_branches;
  std::vector<Computation*> tangent_branches;
  for (size_t i = 0; i < branches.size(); ++i) {
    const LinearizedCallee& lc = parts[i];
    const Shape& operand_shape = branches[i]->parameter(0)->shape();
    {
      Computation* w = NewComputation(module, branches[i]->name() + ".with_residuals");
      Emitter e(w);
      Instruction* p = e.Add(Instruction::CreateParameter(0, "operand", operand_shape), true);
      Instruction* out = CallOf(e, lc.primal, {p});
      std::vector<Instruction*> all;
      for (size_t j = 0; j < slots.size(); ++j) {
        const int64_t k = static_cast<int64_t>(j) - offsets[i];
        all.push_back(k >= 0 && k < lc.num_residuals ? Gte(e, out, lc.num_outputs + k)
                                                      : Zeros(e, slots[j]));
      }
      w->set_root(Tuple(e, {Outputs(e, out, lc), Tuple(e, std::move(all))}));
      primal_branches.push_back(w);
    }
    {
      Computation* w = NewComputation(module, branches[i]->name() + ".tangent");
      Emitter e(w);
      Instruction* p = e.Add(Instruction::CreateParameter(
                                 0, "operand", Shape::Tuple({operand_shape, slots_shape})),
                             true);
      Instruction* residuals = Gte(e, p, 1);
      std::vector<Instruction*> call_args = {Gte(e, p, 0)};
      for (int64_t k = 0; k < lc.num_residuals; ++k) {
        call_args.push_back(Gte(e, residuals, offsets[i] + k));
      }
      w->set_root(CallOf(e, lc.linear, std::move(call_args)));
      tangent_branches.push_back(w);
    }
  }
  Emitter& p = ctx.primal();
  Instruction* joint = p.Add(Opcode::kConditional, Shape::Tuple({inst.shape(), slots_shape}),
                             args.primals, BranchAttrs(inst, primal_branches));
  JvpValue out;
  out.primal = Gte(p, joint, 0);
  Instruction* residuals = ctx.Residual(Gte(p, joint, 1));
  Emitter& t = ctx.tangent();
  std::vector<Instruction*> operands = {ctx.Residual(args.primals[0])};
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    operands.push_back(Tuple(t, {args.TangentOrZeros(ctx, i), residuals}));
  }
  out.tangent = t.Add(Opcode::kConditional, inst.shape(), std::move(operands),
                      BranchAttrs(inst, tangent_branches));
  return out;
}

}  // namespace

void RegisterControlFlowJvpRules(JvpRuleRegistry& r) {
  r.Register(Opcode::kTuple, [](const Instruction& inst, const JvpArgs& a,
                                JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    std::vector<Instruction*> ts;
    for (int64_t i = 0; i < inst.operand_count(); ++i) ts.push_back(a.TangentOrZeros(ctx, i));
    return Tuple(ctx.tangent(), std::move(ts));
  });
  r.Register(Opcode::kGetTupleElement, [](const Instruction& inst, const JvpArgs& a,
                                          JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    return Gte(ctx.tangent(), a.tangents[0], inst.attr_int("index"));
  });
  r.RegisterPrimalAndTangent(Opcode::kCall, [](const Instruction& inst, const JvpArgs& a,
                                               JvpContext& ctx) {
    return ctx.Inline(*inst.attr_computation("to_apply"), a.primals, a.tangents);
  });
  r.RegisterPrimalAndTangent(Opcode::kConditional, ConditionalJvp);
  r.Register(Opcode::kCustomCall, [](const Instruction& inst, const JvpArgs& a,
                                     JvpContext& ctx) -> absl::StatusOr<Instruction*> {
    // A sharding constraint is the identity on values.
    if (inst.attr_string("custom_call_target") == hlo::kShardingTarget && inst.operand_count() == 1) {
      return SameOpOnTangents(inst, a, ctx, {true});
    }
    return hlo::OpError(inst, "is not differentiable: custom-call target '",
                        inst.attr_string("custom_call_target"), "' is opaque to autodiff");
  });
}

void RegisterSourceJvpRules(JvpRuleRegistry& r) {
  // Parameters are bound by the linearizer; the other sources are constants.
  for (Opcode op : {Opcode::kParameter, Opcode::kConstant, Opcode::kIota, Opcode::kPartitionId,
                    Opcode::kReplicaId}) {
    r.RegisterZeroDerivative(op);
  }
  for (Opcode op : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kAllToAll,
                    Opcode::kCollectivePermute, Opcode::kReduceScatter}) {
    r.RegisterUnsupported(op, "collectives belong to per-device (partitioned) programs; "
                              "differentiate the global program before partitioning it");
  }
}

}  // namespace sharc::autodiff
