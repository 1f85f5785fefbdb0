#include "autodiff/shard_map_residuals.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "hlo/batching/batch_util.h"
#include "hlo/ir/computation.h"

namespace sharc::autodiff {
namespace {

// Cheaper to rebuild than to send.
bool IsConstant(const Instruction* v) {
  return v->opcode() == Opcode::kConstant ||
         (v->opcode() == Opcode::kBroadcast && v->operand(0)->opcode() == Opcode::kConstant);
}

Instruction* CopyConstant(Computation& into, const Instruction& v) {
  std::vector<Instruction*> operands;
  for (const Instruction* op : v.operands()) operands.push_back(CopyConstant(into, *op));
  auto copy = hlo::CloneWithOperands(v, std::move(operands));
  copy->set_name(Emitter(&into).UniqueName(v.name()));
  return into.AddInstruction(std::move(copy));
}

Instruction* Append(Computation& into, Opcode opcode, const Shape& shape, Instruction* operand) {
  return into.AddInstruction(Instruction::Create(
      opcode, Emitter(&into).UniqueName(hlo::OpcodeName(opcode)), shape, {operand}));
}

// `computation` rebuilt without the parameters numbered in `drop` (they
// have no users), the others renumbered in order. The old computation
// stays in the module, unused, for the transform's clean-up.
Computation* WithoutParameters(Computation& computation, const std::vector<bool>& drop) {
  Module& module = *computation.parent();
  const std::string name = computation.name();
  computation.set_name(UniqueComputationName(module, name + ".with_constants"));
  Computation* rebuilt = NewComputation(module, name);
  Emitter e(rebuilt);
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  int64_t number = 0;
  for (const Instruction* inst : computation.instructions()) {
    if (inst->opcode() == Opcode::kParameter) {
      const size_t n = static_cast<size_t>(inst->parameter_number());
      if (n < drop.size() && drop[n]) continue;
      copies[inst] =
          e.Add(Instruction::CreateParameter(number++, inst->name(), inst->shape()), true);
      continue;
    }
    std::vector<Instruction*> operands;
    for (const Instruction* op : inst->operands()) operands.push_back(copies.at(op));
    copies[inst] = e.Add(hlo::CloneWithOperands(*inst, std::move(operands)), true);
  }
  rebuilt->set_root(copies.at(computation.root()));
  return rebuilt;
}

}  // namespace

absl::StatusOr<ResidualCrossing> CrossResiduals(LinearizedCallee& lc, const BodyVariance& variance,
                                                int64_t first_residual_param) {
  Computation& primal = *lc.primal;
  Computation& linear = *lc.linear;
  Instruction* root = primal.root();
  ResidualCrossing out;
  std::vector<bool> drop_param(static_cast<size_t>(linear.num_parameters()), false);
  std::vector<Instruction*> elements(root->operands().begin(),
                                     root->operands().begin() + lc.num_outputs);
  for (int64_t k = 0; k < lc.num_residuals; ++k) {
    Instruction* value = root->operand(lc.num_outputs + k);
    const Axes varying = variance.Of(value);
    Instruction* crossing = value;
    while (crossing->opcode() == Opcode::kPBroadcast) crossing = crossing->operand(0);
    const Axes base = variance.Of(crossing);
    Axes recast;
    for (const std::string& a : varying) {
      if (std::find(base.begin(), base.end(), a) == base.end()) recast.push_back(a);
    }
    Instruction* param = linear.parameter(first_residual_param + k);
    const std::vector<Instruction*> users = param->users();
    const bool was_root = linear.root() == param;
    const Shape shape = crossing->shape();
    Instruction* restored = param;
    const bool rebuilt = IsConstant(crossing);
    if (rebuilt) {
      drop_param[static_cast<size_t>(first_residual_param + k)] = true;
      restored = CopyConstant(linear, *crossing);
    } else if (crossing->opcode() == Opcode::kParameter) {
      out.parameter.push_back(crossing->parameter_number());
    } else {
      if (shape.rank() == 0 && !base.empty()) {
        const Shape vector(shape.type(), {1});
        auto up = Instruction::Create(Opcode::kReshape, Emitter(&primal).UniqueName("reshape"),
                                      vector, {crossing});
        crossing = primal.AddInstructionBefore(std::move(up), root);
        param->set_shape(vector);
        restored = Append(linear, Opcode::kReshape, shape, param);
      }
      elements.push_back(crossing);
      out.parameter.push_back(-1);
    }
    if (!rebuilt) {
      out.specs.push_back(base.empty() ? hlo::AxisSpec{} : hlo::AxisSpec{base});
      out.axes.push_back(base);
    }
    if (!recast.empty()) {
      restored = Append(linear, Opcode::kPBroadcast, shape, restored);
      restored->set_attr("axes", hlo::PrintAxesText(recast));
    }
    if (restored != param) {
      for (Instruction* user : users) user->ReplaceOperandWith(param, restored);
      if (was_root) linear.set_root(restored);
    }
    // The parameter reads the value it is named after.
    if (!rebuilt && linear.FindInstruction(crossing->name()) == nullptr) {
      param->set_name(crossing->name());
    }
  }
  // Residual parameters are created where first read: move the casts and
  // copies up before the readers.
  linear.SortInDefinitionOrder();
  std::vector<Shape> shapes;
  for (const Instruction* v : elements) shapes.push_back(v->shape());
  primal.set_root(primal.AddInstruction(Instruction::Create(
      Opcode::kTuple, Emitter(&primal).UniqueName("tuple"), Shape::Tuple(shapes), elements)));
  if (std::find(drop_param.begin(), drop_param.end(), true) != drop_param.end()) {
    lc.linear = WithoutParameters(linear, drop_param);
  }
  lc.num_residuals = static_cast<int64_t>(out.specs.size());
  return out;
}

}  // namespace sharc::autodiff
