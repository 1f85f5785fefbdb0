#include "autodiff/linearizer.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ir/primitive_type.h"

namespace sharc::autodiff {

bool IsDifferentiableType(PrimitiveType type) {
  return hlo::IsFloatingPoint(type) || hlo::IsComplex(type);
}

bool CarriesTangent(const Shape& shape) {
  if (!shape.is_tuple()) return IsDifferentiableType(shape.type());
  for (const Shape& s : shape.tuple_shapes()) {
    if (CarriesTangent(s)) return true;
  }
  return false;
}

Instruction* Linearizer::Residual(Instruction* value) {
  if (!split_) return value;
  auto it = residual_params_.find(value);
  if (it != residual_params_.end()) return it->second;
  // Constants (and their broadcasts) are cheaper to recompute than to save.
  if (value->opcode() == Opcode::kConstant ||
      (value->opcode() == Opcode::kBroadcast &&
       value->operand(0)->opcode() == Opcode::kConstant)) {
    std::vector<Instruction*> operands;
    for (Instruction* op : value->operands()) operands.push_back(Residual(op));
    Instruction* copy = tangent_.Add(hlo::CloneWithOperands(*value, std::move(operands)), true);
    residual_params_[value] = copy;
    return copy;
  }
  Computation* linear = tangent_.computation();
  const int64_t number = linear->num_parameters();
  Instruction* param = tangent_.Add(
      Instruction::CreateParameter(number, absl::StrCat("residual.", residual_values_.size()),
                                   value->shape()),
      /*keep_name=*/true);
  residual_params_[value] = param;
  residual_values_.push_back(value);
  return param;
}

Instruction* Linearizer::EmitPrimal(const Instruction& inst, std::vector<Instruction*> operands) {
  return primal_.Add(hlo::CloneWithOperands(inst, std::move(operands)), /*keep_name=*/true);
}

absl::StatusOr<LinearizedCallee> Linearizer::LinearizeCallee(const Computation& callee,
                                                             std::vector<bool> differentiable) {
  return LinearizeComputation(callee, differentiable, /*flatten=*/true);
}

absl::StatusOr<JvpValue> Linearizer::Differentiate(const Instruction& inst) {
  const JvpRule* rule = FindJvpRule(inst.opcode());
  if (rule == nullptr || !rule->unsupported_reason.empty()) {
    return absl::UnimplementedError(absl::StrCat(
        hlo::OpcodeName(inst.opcode()), " is not differentiable: ",
        rule == nullptr ? std::string("the op has no JVP rule") : rule->unsupported_reason,
        ", in ", inst.Describe()));
  }
  JvpArgs args;
  bool any_tangent = false;
  for (const Instruction* op : inst.operands()) {
    const JvpValue& v = values_.at(op);
    args.primals.push_back(v.primal);
    // Integer and pred values never carry a tangent.
    Instruction* t = CarriesTangent(op->shape()) ? v.tangent : nullptr;
    args.tangents.push_back(t);
    any_tangent |= t != nullptr;
  }
  primal_.set_origin(&inst);
  tangent_.set_origin(&inst);
  JvpValue out;
  if (!any_tangent || rule->zero_derivative) {
    out.primal = EmitPrimal(inst, args.primals);
    return out;
  }
  if (rule->primal_and_tangent) {
    ASSIGN_OR_RETURN(out, rule->primal_and_tangent(inst, args, *this));
  } else {
    out.primal = EmitPrimal(inst, args.primals);
    args.result = out.primal;
    ASSIGN_OR_RETURN(out.tangent, rule->tangent(inst, args, *this));
  }
  if (!CarriesTangent(inst.shape())) out.tangent = nullptr;
  if (out.tangent != nullptr && out.tangent->shape() != inst.shape()) {
    return absl::InternalError(absl::StrCat("the JVP rule of ", hlo::OpcodeName(inst.opcode()),
                                            " gave a tangent of shape ",
                                            out.tangent->shape().ToString(), ", expected ",
                                            inst.shape().ToString(), ", in ", inst.Describe()));
  }
  return out;
}

absl::StatusOr<JvpValue> Linearizer::Run(const Computation& source,
                                         const std::vector<Instruction*>& primal_params,
                                         const std::vector<Instruction*>& tangent_params) {
  if (source.root() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation '", source.name(), "' has no root"));
  }
  for (int64_t i = 0; i < source.num_parameters(); ++i) {
    values_[source.parameter(i)] =
        JvpValue{primal_params[static_cast<size_t>(i)], tangent_params[static_cast<size_t>(i)]};
  }
  for (const Instruction* inst : source.instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    ASSIGN_OR_RETURN(JvpValue v, Differentiate(*inst));
    values_[inst] = v;
  }
  return values_.at(source.root());
}

absl::StatusOr<LinearizedCallee> LinearizeComputation(const Computation& f,
                                                      const std::vector<bool>& differentiable,
                                                      bool flatten) {
  Module& module = *f.parent();
  Computation* primal = NewComputation(module, f.name() + ".primal");
  Computation* linear = NewComputation(module, f.name() + ".linear");
  Emitter pe(primal);
  Emitter te(linear);
  std::vector<Instruction*> xs;
  std::vector<Instruction*> ts;
  int64_t tangent_number = 0;
  for (int64_t i = 0; i < f.num_parameters(); ++i) {
    const Instruction* param = f.parameter(i);
    xs.push_back(pe.Add(Instruction::CreateParameter(i, param->name(), param->shape()), true));
    if (!differentiable[static_cast<size_t>(i)]) {
      ts.push_back(nullptr);
      continue;
    }
    Instruction* t = te.Add(Instruction::CreateParameter(tangent_number++,
                                                         absl::StrCat("tangent.", param->name()),
                                                         param->shape()),
                            true);
    ts.push_back(CarriesTangent(param->shape()) ? t : nullptr);
  }
  Linearizer linearizer(pe, te, /*split=*/true);
  ASSIGN_OR_RETURN(JvpValue root, linearizer.Run(f, xs, ts));
  pe.set_origin(f.root());
  te.set_origin(f.root());
  LinearizedCallee out;
  out.primal = primal;
  out.linear = linear;
  std::vector<Instruction*> results;
  out.tuple_output = flatten && root.primal->shape().is_tuple();
  if (out.tuple_output) {
    for (int64_t i = 0; i < root.primal->shape().tuple_size(); ++i) {
      results.push_back(Gte(pe, root.primal, i));
    }
  } else {
    results.push_back(root.primal);
  }
  out.num_outputs = static_cast<int64_t>(results.size());
  for (Instruction* r : linearizer.residuals()) results.push_back(r);
  out.num_residuals = static_cast<int64_t>(linearizer.residuals().size());
  primal->set_root(Tuple(pe, std::move(results)));
  linear->set_root(root.tangent != nullptr ? root.tangent : Zeros(te, f.root()->shape()));
  return out;
}

}  // namespace sharc::autodiff
