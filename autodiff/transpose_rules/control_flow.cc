// Transpose rules of tuples, calls, conditionals and sharding constraints.
// A call transposes to a call of the transposed callee; a conditional to a
// conditional of transposed branches, each returning the cotangents of every
// branch's operand (zeros for the others) so the branches agree on a type.
#include "absl/strings/str_cat.h"
#include "autodiff/ops_outside_autodiff.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ops/custom_call_targets.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

absl::StatusOr<std::vector<Cotangent>> CallTranspose(const Instruction& inst, const Cotangent& ct,
                                                     TransposeContext& ctx) {
  Emitter& e = ctx.emitter();
  std::vector<LinearTree> trees;
  for (const Instruction* op : inst.operands()) trees.push_back(ctx.Linearity(op));
  ASSIGN_OR_RETURN(TransposedCallee t,
                   ctx.TransposeCallee(*inst.attr_computation("to_apply"), trees));
  std::vector<Instruction*> args;
  for (int64_t i : t.passed_params) {
    ASSIGN_OR_RETURN(Instruction * v, ctx.Primal(inst.operand(i)));
    args.push_back(v);
  }
  args.push_back(ctx.Materialize(ct, inst.shape()));
  Instruction* result = CallOf(e, t.computation, std::move(args));
  std::vector<Cotangent> out = NoCotangents(inst);
  for (size_t j = 0; j < t.cotangent_params.size(); ++j) {
    out[static_cast<size_t>(t.cotangent_params[j])] =
        Cotangent::Of(Gte(e, result, static_cast<int64_t>(j)));
  }
  return out;
}

absl::StatusOr<std::vector<Cotangent>> ConditionalTranspose(const Instruction& inst,
                                                            const Cotangent& ct,
                                                            TransposeContext& ctx) {
  if (ctx.IsLinear(inst.operand(0))) {
    return hlo::OpError(inst, "cannot be transposed: the branch index depends on the linear "
                              "inputs");
  }
  const bool indexed = inst.has_attr("branch_computations");
  std::vector<Computation*> branches =
      indexed ? inst.attr_computations("branch_computations")
              : std::vector<Computation*>{inst.attr_computation("true_computation"),
                                          inst.attr_computation("false_computation")};
  Emitter& e = ctx.emitter();
  Module& module = ModuleOf(e);
  // The result: cotangents of every linear branch operand.
  std::vector<int64_t> linear_operands;
  std::vector<Shape> result_shapes;
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    if (!ctx.IsLinear(inst.operand(i))) continue;
    linear_operands.push_back(i);
    result_shapes.push_back(inst.operand(i)->shape());
  }
  const Shape result_shape = Shape::Tuple(result_shapes);
  Instruction* ct_value = ctx.Materialize(ct, inst.shape());
  std::vector<Computation*> new_branches;
  std::vector<Instruction*> operands;
  ASSIGN_OR_RETURN(Instruction * index, ctx.Primal(inst.operand(0)));
  operands.push_back(index);
  for (size_t b = 0; b < branches.size(); ++b) {
    const Instruction* operand = inst.operand(static_cast<int64_t>(b) + 1);
    ASSIGN_OR_RETURN(TransposedCallee t,
                     ctx.TransposeCallee(*branches[b], {ctx.Linearity(operand)}));
    // Branch b's operand: (its primal operand if needed, the cotangent).
    std::vector<Instruction*> packed;
    std::vector<Shape> packed_shapes;
    if (!t.passed_params.empty()) {
      ASSIGN_OR_RETURN(Instruction * v, ctx.Primal(operand));
      packed.push_back(v);
      packed_shapes.push_back(v->shape());
    }
    packed.push_back(ct_value);
    packed_shapes.push_back(ct_value->shape());
    operands.push_back(Tuple(e, std::move(packed)));
    Computation* w = NewComputation(module, branches[b]->name() + ".transpose_branch");
    Emitter we(w);
    Instruction* p = we.Add(
        Instruction::CreateParameter(0, "operand", Shape::Tuple(packed_shapes)), true);
    std::vector<Instruction*> args;
    for (int64_t i = 0; i < static_cast<int64_t>(packed_shapes.size()); ++i) {
      args.push_back(Gte(we, p, i));
    }
    Instruction* cts = CallOf(we, t.computation, std::move(args));
    std::vector<Instruction*> results;
    for (size_t j = 0; j < linear_operands.size(); ++j) {
      const bool mine = linear_operands[j] == static_cast<int64_t>(b) + 1 &&
                        !t.cotangent_params.empty();
      results.push_back(mine ? Gte(we, cts, 0) : Zeros(we, result_shapes[j]));
    }
    w->set_root(Tuple(we, std::move(results)));
    new_branches.push_back(w);
  }
  std::vector<hlo::Attribute> attrs;
  if (indexed) {
    attrs.push_back({"branch_computations", new_branches});
  } else {
    attrs.push_back({"true_computation", new_branches[0]});
    attrs.push_back({"false_computation", new_branches[1]});
  }
  Instruction* result = e.Add(Opcode::kConditional, result_shape, std::move(operands),
                              std::move(attrs));
  std::vector<Cotangent> out = NoCotangents(inst);
  for (size_t j = 0; j < linear_operands.size(); ++j) {
    out[static_cast<size_t>(linear_operands[j])] =
        Cotangent::Of(Gte(e, result, static_cast<int64_t>(j)));
  }
  return out;
}

}  // namespace

void RegisterControlFlowTransposeRules(TransposeRuleRegistry& r) {
  r.Register(Opcode::kTuple, [](const Instruction& inst, const Cotangent& ct,
                                TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    std::vector<Cotangent> out = NoCotangents(inst);
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (ct.value != nullptr) {
        out[static_cast<size_t>(i)] = Cotangent::Of(Gte(ctx.emitter(), ct.value, i));
      } else if (static_cast<size_t>(i) < ct.elements.size()) {
        out[static_cast<size_t>(i)] = ct.elements[static_cast<size_t>(i)];
      }
    }
    return out;
  });
  r.Register(Opcode::kGetTupleElement,
             [](const Instruction& inst, const Cotangent& ct,
                TransposeContext&) -> absl::StatusOr<std::vector<Cotangent>> {
               Cotangent tuple;
               tuple.elements.resize(static_cast<size_t>(inst.operand(0)->shape().tuple_size()));
               tuple.elements[static_cast<size_t>(inst.attr_int("index"))] = ct;
               return std::vector<Cotangent>{tuple};
             });
  r.Register(Opcode::kCall, CallTranspose);
  r.Register(Opcode::kConditional, ConditionalTranspose);
  r.Register(Opcode::kCustomCall, [](const Instruction& inst, const Cotangent& ct,
                                     TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
    if (inst.attr_string("custom_call_target") != hlo::kShardingTarget || inst.operand_count() != 1) {
      return hlo::OpError(inst, "cannot be transposed: custom-call target '",
                          inst.attr_string("custom_call_target"), "' is opaque to autodiff");
    }
    // The constraint is the identity; the cotangent keeps the layout.
    return std::vector<Cotangent>{Cotangent::Of(
        ctx.emitter().Add(hlo::CloneWithOperands(inst, {ctx.Materialize(ct, inst.shape())})))};
  });
  // sort moves elements by a permutation computed from its operands: not
  // linear (its JVP gathers the tangent, and that gather is what reverse
  // mode transposes). A token carries nothing to transpose.
  r.RegisterNotLinear(Opcode::kSort);
  r.RegisterNotLinear(Opcode::kTopK);  // likewise: its JVP gathers at its indices
  r.RegisterNotLinear(Opcode::kAfterAll);
  for (Opcode op : {Opcode::kBitcastConvert, Opcode::kRng, Opcode::kRngBitGenerator,
                    Opcode::kRngGetAndUpdateState}) {
    r.RegisterNotLinear(op);
  }
  RegisterOpsOutsideAutodiff(r);
  for (Opcode op : {Opcode::kAllGather, Opcode::kAllReduce, Opcode::kAllToAll,
                    Opcode::kCollectivePermute, Opcode::kReduceScatter}) {
    r.RegisterUnsupported(op, "collectives belong to per-device (partitioned) programs; "
                              "differentiate the global program before partitioning it");
  }
}

}  // namespace sharc::autodiff
