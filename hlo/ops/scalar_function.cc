#include "hlo/ops/scalar_function.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "hlo/ops/op_def.h"

namespace sharc::hlo {
namespace {

bool IsScalar(const Shape& shape) { return shape.is_array() && shape.rank() == 0; }

// `root` and what it depends on, operands before users.
std::vector<const Instruction*> PostOrder(const Instruction& root) {
  std::vector<const Instruction*> order;
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<std::pair<const Instruction*, bool>> stack{{&root, false}};
  while (!stack.empty()) {
    auto [inst, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(inst);
      continue;
    }
    if (!seen.insert(inst).second) continue;
    stack.push_back({inst, true});
    for (const Instruction* op : inst->operands()) stack.push_back({op, false});
  }
  return order;
}

}  // namespace

bool IsScalarElementwise(const Instruction& inst) {
  if (!IsScalar(inst.shape()) || !HasOpDef(inst.opcode())) return false;
  const OpTraits& traits = GetOpDef(inst.opcode()).traits;
  const bool scalar_bitcast = inst.opcode() == Opcode::kBitcastConvert &&
                              inst.operand_count() == 1 && IsScalar(inst.operand(0)->shape());
  return (traits.elementwise || scalar_bitcast) && !traits.side_effecting &&
         inst.called_computations().empty();
}

bool IsScalarFunction(const Instruction& root) {
  for (const Instruction* inst : PostOrder(root)) {
    const bool leaf = inst->opcode() == Opcode::kParameter ||
                      (inst->opcode() == Opcode::kConstant && IsScalar(inst->shape()));
    if (!leaf && !IsScalarElementwise(*inst)) return false;
  }
  return true;
}

Instruction* LiftScalarFunction(
    const Instruction& root, const std::vector<int64_t>& dims,
    absl::FunctionRef<Instruction*(int64_t)> argument,
    absl::FunctionRef<Instruction*(std::unique_ptr<Instruction>)> add, const std::string& prefix,
    const std::string& root_name) {
  absl::flat_hash_map<const Instruction*, Instruction*> arrays;
  for (const Instruction* inst : PostOrder(root)) {
    const std::string name =
        inst == &root ? root_name : absl::StrCat(prefix, ".", inst->name());
    if (inst->opcode() == Opcode::kParameter) {
      arrays[inst] = argument(inst->parameter_number());
    } else if (inst->opcode() == Opcode::kConstant) {
      Instruction* scalar = add(inst->CloneWithOperands(absl::StrCat(name, ".scalar"), {}));
      auto broadcast = Instruction::Create(Opcode::kBroadcast, name,
                                           Shape(inst->shape().type(), dims), {scalar});
      broadcast->set_attr("dimensions", IntList{});
      arrays[inst] = add(std::move(broadcast));
    } else {
      std::vector<Instruction*> operands;
      for (const Instruction* op : inst->operands()) operands.push_back(arrays.at(op));
      std::unique_ptr<Instruction> clone = inst->CloneWithOperands(name, operands);
      clone->set_shape(Shape(inst->shape().type(), dims));
      clone->clear_sharding();
      arrays[inst] = add(std::move(clone));
    }
  }
  return arrays.at(&root);
}

}  // namespace sharc::hlo
