#include "autodiff/transposer.h"

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"
#include "hlo/batching/batch_util.h"

namespace sharc::autodiff {

absl::StatusOr<Instruction*> Transposer::Primal(const Instruction* value) {
  auto it = forward_.find(value);
  if (it == forward_.end() || it->second == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot transpose: the program is not linear, a value it needs is computed from its "
        "linear inputs, in ",
        value->Describe()));
  }
  return it->second;
}

Instruction* Transposer::Materialize(const Cotangent& ct, const Shape& shape) {
  if (ct.value != nullptr) return ct.value;
  if (!ct.elements.empty() && shape.is_tuple()) {
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(Materialize(ct.elements[static_cast<size_t>(i)], shape.tuple_shape(i)));
    }
    return Tuple(target_, std::move(elements));
  }
  return Zeros(target_, shape);
}

void Transposer::Accumulate(Cotangent& acc, Cotangent add, const Shape& shape) {
  if (add.zero()) return;
  if (acc.zero()) {
    acc = std::move(add);
    return;
  }
  if (acc.value != nullptr && add.value != nullptr) {
    acc.value = AddAny(target_, acc.value, add.value);
    return;
  }
  // Combine a tuple cotangent leaf by leaf.
  auto expand = [&](Cotangent& ct) {
    if (ct.value == nullptr) {
      ct.elements.resize(static_cast<size_t>(shape.tuple_size()));
      return;
    }
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      ct.elements.push_back(Cotangent::Of(Gte(target_, ct.value, i)));
    }
    ct.value = nullptr;
  };
  expand(acc);
  expand(add);
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    Accumulate(acc.elements[static_cast<size_t>(i)],
               std::move(add.elements[static_cast<size_t>(i)]), shape.tuple_shape(i));
  }
}

absl::StatusOr<TransposedCallee> Transposer::TransposeCallee(
    const Computation& callee, const std::vector<LinearTree>& params) {
  return TransposeComputation(callee, params);
}

absl::StatusOr<std::vector<Cotangent>> Transposer::Run(
    const Computation& linear, const std::vector<LinearTree>& params,
    const std::vector<Instruction*>& param_values, Cotangent root_ct) {
  RETURN_IF_ERROR(AnalyzeLinearity(linear, params, &trees_).status());
  // Forward: the non-linear part of the program.
  for (const Instruction* inst : linear.instructions()) {
    const LinearTree& tree = trees_.at(inst);
    target_.set_origin(inst);
    if (inst->opcode() == Opcode::kParameter) {
      forward_[inst] = param_values.at(static_cast<size_t>(inst->parameter_number()));
      continue;
    }
    if (!tree.Any()) {
      // A non-linear value read from a linear instruction (e.g. the zero
      // tangent of a loop counter) has no value here; that is an error only
      // if a rule asks for it (Primal).
      std::vector<Instruction*> operands;
      for (const Instruction* op : inst->operands()) {
        auto it = forward_.find(op);
        if (it == forward_.end() || it->second == nullptr) break;
        operands.push_back(it->second);
      }
      if (operands.size() == inst->operands().size()) {
        forward_[inst] = target_.Add(hlo::CloneWithOperands(*inst, std::move(operands)), true);
      }
      continue;
    }
    // Mixed tuples keep their non-linear leaves readable (linear ones are
    // zeros there: nothing may read them).
    if (inst->opcode() == Opcode::kTuple) {
      std::vector<Instruction*> elements;
      bool ok = true;
      for (const Instruction* op : inst->operands()) {
        auto it = forward_.find(op);
        if (it != forward_.end() && it->second != nullptr) {
          elements.push_back(it->second);
        } else if (trees_.at(op).All()) {
          elements.push_back(Zeros(target_, op->shape()));
        } else {
          ok = false;
        }
      }
      if (ok) forward_[inst] = Tuple(target_, std::move(elements));
    } else if (inst->opcode() == Opcode::kGetTupleElement) {
      auto it = forward_.find(inst->operand(0));
      if (it != forward_.end() && it->second != nullptr) {
        forward_[inst] = Gte(target_, it->second, inst->attr_int("index"));
      }
    }
  }
  // Backward: cotangents, from the root to the parameters.
  absl::flat_hash_map<const Instruction*, Cotangent> cts;
  const Instruction* root = linear.root();
  if (trees_.at(root).Any()) cts[root] = std::move(root_ct);
  std::vector<Instruction*> order = linear.instructions();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Instruction* inst = *it;
    if (inst->opcode() == Opcode::kParameter || !trees_.at(inst).Any()) continue;
    auto found = cts.find(inst);
    if (found == cts.end() || found->second.zero()) continue;
    const TransposeRule* rule = FindTransposeRule(inst->opcode());
    if (rule == nullptr || !rule->unsupported_reason.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "cannot transpose ", hlo::OpcodeName(inst->opcode()), ": ",
          rule == nullptr ? std::string("the op has no transpose rule") : rule->unsupported_reason,
          ", in ", inst->Describe()));
    }
    target_.set_origin(inst);
    Cotangent ct = found->second;
    ASSIGN_OR_RETURN(std::vector<Cotangent> operand_cts, rule->transpose(*inst, ct, *this));
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const Instruction* op = inst->operand(i);
      if (!trees_.at(op).Any()) continue;
      Accumulate(cts[op], std::move(operand_cts[static_cast<size_t>(i)]), op->shape());
    }
  }
  std::vector<Cotangent> out;
  for (int64_t i = 0; i < linear.num_parameters(); ++i) {
    auto it = cts.find(linear.parameter(i));
    out.push_back(it == cts.end() ? Cotangent{} : it->second);
  }
  return out;
}

absl::StatusOr<TransposedCallee> TransposeComputation(const Computation& callee,
                                                      const std::vector<LinearTree>& params) {
  Module& module = *callee.parent();
  Computation* computation = NewComputation(module, callee.name() + ".transpose");
  Emitter e(computation);
  TransposedCallee out;
  out.computation = computation;
  std::vector<Instruction*> values;
  int64_t number = 0;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    const Instruction* param = callee.parameter(i);
    const LinearTree& tree = params[static_cast<size_t>(i)];
    Instruction* value = nullptr;
    if (!tree.All()) {
      value = e.Add(Instruction::CreateParameter(number++, param->name(), param->shape()), true);
      out.passed_params.push_back(i);
    }
    if (tree.Any()) out.cotangent_params.push_back(i);
    values.push_back(value);
  }
  Instruction* ct = e.Add(
      Instruction::CreateParameter(number, "cotangent", callee.root()->shape()), true);
  Transposer transposer(e);
  ASSIGN_OR_RETURN(std::vector<Cotangent> cts,
                   transposer.Run(callee, params, values, Cotangent::Of(ct)));
  std::vector<Instruction*> results;
  for (int64_t i : out.cotangent_params) {
    results.push_back(transposer.Materialize(cts[static_cast<size_t>(i)],
                                             callee.parameter(i)->shape()));
  }
  computation->set_root(Tuple(e, std::move(results)));
  return out;
}

}  // namespace sharc::autodiff
