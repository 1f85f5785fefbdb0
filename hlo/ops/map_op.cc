// map(a, b, ...), dimensions={0..rank-1}, to_apply=f: f applied to the
// elements at each index of the operands, which share their dims; f takes
// one scalar per operand (of its type) and returns a scalar, whose type is
// the result's.
#include <vector>

#include "absl/strings/str_join.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/computation.h"
#include "hlo/ops/op_def.h"
#include "hlo/ops/op_util.h"

namespace sharc::hlo {
namespace {

absl::StatusOr<Shape> InferMap(const Instruction& inst) {
  ASSIGN_OR_RETURN(Shape first, ExpectSameDimsOperands(inst));
  const std::vector<int64_t>& dims = inst.attr_ints("dimensions");
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] != static_cast<int64_t>(d) || dims.size() != static_cast<size_t>(first.rank())) {
      return OpError(inst, "dimensions={", absl::StrJoin(dims, ","),
                     "} must list every dim of the operands in order (XLA maps all of them)");
    }
  }
  const Computation* f = inst.attr_computation("to_apply");
  if (f == nullptr || f->root() == nullptr) return OpError(inst, "needs to_apply");
  const Shape& result = f->root()->shape();
  if (!result.is_scalar()) {
    return OpError(inst, "to_apply ", f->name(), " must return a scalar, returns ",
                   result.ToString());
  }
  return Shape(result.type(), first.dims());
}

absl::Status VerifyMap(const Instruction& inst) {
  RETURN_IF_ERROR(InferMap(inst).status());
  std::vector<Shape> params;
  for (const Instruction* op : inst.operands()) params.push_back(Shape::Scalar(op->shape().type()));
  return ExpectComputationSignature(inst, inst.attr_computation("to_apply"), "to_apply", params,
                                    nullptr);
}

absl::StatusOr<Literal> EvaluateMap(const Instruction& inst,
                                    absl::Span<const Literal* const> operands, EvalContext& ctx) {
  RETURN_IF_ERROR(ExpectOperandValues(inst, operands));
  ASSIGN_OR_RETURN(Shape shape, InferMap(inst));
  RETURN_IF_ERROR(VerifyMap(inst));
  const Computation& f = *inst.attr_computation("to_apply");
  Literal out(shape);
  std::vector<Literal> scalars(operands.size());
  std::vector<const Literal*> args(operands.size());
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k) {
      scalars[k] = ScalarAt(*operands[k], i);
      args[k] = &scalars[k];
    }
    ASSIGN_OR_RETURN(Literal r, ctx.Call(f, args));
    CopyElement(r, 0, out, i);
  }
  return out;
}

}  // namespace

void RegisterMapOp(OpRegistry& registry) {
  OpDef def;
  def.opcode = Opcode::kMap;
  def.min_operands = 1;
  def.max_operands = -1;
  def.attributes = {{"dimensions", AttrKind::kIntList},
                    {"to_apply", AttrKind::kComputation, true}};
  def.infer_shape = InferMap;
  def.verify = VerifyMap;
  def.evaluate = EvaluateMap;
  registry.Register(std::move(def));
}

}  // namespace sharc::hlo
