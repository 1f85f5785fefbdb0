// Transpose rules of the MapReduce blocks (reference section 1.4):
// broadcast <-> sum, mean -> broadcast / n, and map -> map of the transposed
// body. They emit the blocks themselves, so reverse mode keeps the
// communication pattern visible in the printed program.
#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"
#include "hlo/base/status_macros.h"
#include "hlo/ops/op_util.h"

namespace sharc::autodiff {
namespace {

hlo::Attribute Placement(const Instruction& inst) {
  return {"placement", inst.attr_string("placement")};
}

absl::StatusOr<std::vector<Cotangent>> MapTranspose(const Instruction& inst, const Cotangent& ct,
                                                    TransposeContext& ctx) {
  const Computation& f = *inst.attr_computation("to_apply");
  std::vector<LinearTree> trees;
  for (const Instruction* op : inst.operands()) trees.push_back(ctx.Linearity(op));
  ASSIGN_OR_RETURN(TransposedCallee t, ctx.TransposeCallee(f, trees));
  Emitter& e = ctx.emitter();
  const Shape& result = inst.shape();
  Computation* body = t.computation;
  std::vector<Instruction*> operands;
  for (int64_t i : t.passed_params) {
    ASSIGN_OR_RETURN(Instruction * v, ctx.Primal(inst.operand(i)));
    operands.push_back(v);
  }
  Instruction* ct_value = ctx.Materialize(ct, result);
  if (!result.is_tuple()) {
    operands.push_back(ct_value);
  } else {
    // Map operands are arrays: pass the cotangent's leaves one by one to a
    // wrapper that packs them for the transposed body.
    body = NewComputation(ModuleOf(e), t.computation->name() + ".unpacked");
    Emitter w(body);
    std::vector<Instruction*> args;
    int64_t number = 0;
    for (int64_t i : t.passed_params) {
      args.push_back(w.Add(Instruction::CreateParameter(number++, absl::StrCat("primal.", i),
                                                        f.parameter(i)->shape()),
                           true));
    }
    std::vector<Instruction*> leaves;
    for (int64_t i = 0; i < result.tuple_size(); ++i) {
      leaves.push_back(w.Add(Instruction::CreateParameter(number++, absl::StrCat("cotangent.", i),
                                                          f.root()->shape().tuple_shape(i)),
                             true));
      operands.push_back(Gte(e, ct_value, i));
    }
    args.push_back(Tuple(w, std::move(leaves)));
    body->set_root(CallOf(w, t.computation, std::move(args)));
  }
  std::vector<Shape> placed;
  for (int64_t i : t.cotangent_params) placed.push_back(inst.operand(i)->shape());
  Instruction* cts = e.Add(Opcode::kMapReduceMap, Shape::Tuple(placed), std::move(operands),
                           {Placement(inst), {"to_apply", body}});
  std::vector<Cotangent> out = NoCotangents(inst);
  for (size_t j = 0; j < t.cotangent_params.size(); ++j) {
    out[static_cast<size_t>(t.cotangent_params[j])] =
        Cotangent::Of(Gte(e, cts, static_cast<int64_t>(j)));
  }
  return out;
}

}  // namespace

void RegisterMapReduceTransposeRules(TransposeRuleRegistry& r) {
  r.Register(Opcode::kMapReduceBroadcast,
             [](const Instruction& inst, const Cotangent& ct,
                TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
               return std::vector<Cotangent>{Cotangent::Of(
                   ctx.emitter().Add(Opcode::kMapReduceSum, inst.operand(0)->shape(), {ct.value},
                                     {Placement(inst)}))};
             });
  for (Opcode op : {Opcode::kMapReduceSum, Opcode::kMapReduceMean}) {
    r.Register(op, [op](const Instruction& inst, const Cotangent& ct,
                        TransposeContext& ctx) -> absl::StatusOr<std::vector<Cotangent>> {
      Emitter& e = ctx.emitter();
      const Shape& operand = inst.operand(0)->shape();
      Instruction* spread =
          e.Add(Opcode::kMapReduceBroadcast, operand, {ct.value}, {Placement(inst)});
      if (op == Opcode::kMapReduceMean) {
        spread = Div(e, spread, Full(e, operand, static_cast<double>(operand.dim(0))));
      }
      return std::vector<Cotangent>{Cotangent::Of(spread)};
    });
  }
  r.Register(Opcode::kMapReduceMap, MapTranspose);
}

}  // namespace sharc::autodiff
