#include "spmd/partition/computation_copy.h"

#include <vector>

#include "hlo/batching/batch_util.h"

namespace sharc::spmd {

using hlo::Computation;
using hlo::Instruction;
using hlo::Module;
using hlo::Opcode;

std::unique_ptr<Instruction> CloneWith(const Instruction& inst,
                                       const std::vector<Instruction*>& operands,
                                       const hlo::Shape& shape, const std::string& name,
                                       const ComputationMap& mapped) {
  std::unique_ptr<Instruction> c = hlo::CloneWithOperands(inst, operands);
  c->set_shape(shape);
  c->set_name(name);
  c->clear_sharding();
  for (const hlo::Attribute& a : inst.attributes()) {
    hlo::AttrValue v = a.value;
    bool remapped = false;
    auto map = [&](Computation*& comp) {
      auto it = mapped.find(comp);
      if (it == mapped.end()) return;
      comp = it->second;
      remapped = true;
    };
    if (auto* cp = std::get_if<Computation*>(&v)) map(*cp);
    if (auto* l = std::get_if<std::vector<Computation*>>(&v))
      for (Computation*& x : *l) map(x);
    if (remapped) c->set_attr(a.name, std::move(v));
  }
  return c;
}

Computation* CopyComputation(const Computation& comp, Module& into, const ComputationMap& mapped) {
  auto copy = std::make_unique<Computation>(comp.name());
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (const Instruction* inst : comp.instructions()) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = copy->AddInstruction(CloneWith(*inst, ops, inst->shape(), inst->name(), mapped));
  }
  copy->set_root(map.at(comp.root()));
  return into.AddComputation(std::move(copy));
}

ComputationMap CopyScalarComputations(const Module& module, Module& into) {
  auto is_control_flow = [](const Instruction& inst) {
    return inst.opcode() == Opcode::kWhile || inst.opcode() == Opcode::kCall ||
           inst.opcode() == Opcode::kConditional;
  };
  // Partitioned: the entry and the control-flow bodies it reaches through
  // partitioned computations. Computations elsewhere are not part of the
  // program (left over by the passes that built the module).
  absl::flat_hash_set<const Computation*> partitioned;
  std::vector<const Computation*> work = {module.entry()};
  while (!work.empty()) {
    const Computation* comp = work.back();
    work.pop_back();
    if (!partitioned.insert(comp).second) continue;
    for (const Instruction* inst : comp->instructions()) {
      if (!is_control_flow(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) work.push_back(callee);
    }
  }
  // Scalar: what other ops of partitioned computations apply (reducers,
  // comparators, combiners), and everything those call, even through a
  // `call` (a body can be a scalar helper too; then it is both).
  absl::flat_hash_set<const Computation*> scalar;
  for (const Computation* comp : partitioned) {
    for (const Instruction* inst : comp->instructions()) {
      if (is_control_flow(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) work.push_back(callee);
    }
  }
  while (!work.empty()) {
    const Computation* comp = work.back();
    work.pop_back();
    if (!scalar.insert(comp).second) continue;
    for (const Instruction* inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) work.push_back(callee);
    }
  }
  ComputationMap mapped;
  // module.computations() lists callees before callers.
  for (const Computation* comp : module.computations()) {
    if (scalar.contains(comp)) mapped[comp] = CopyComputation(*comp, into, mapped);
  }
  return mapped;
}

void SetCallees(Instruction* inst, const std::string& attr, std::vector<Computation*> callees) {
  if (attr == "branch_computations") {
    inst->set_attr(attr, std::move(callees));
  } else {
    inst->set_attr(attr, callees[0]);
  }
}

void SetBranches(Instruction* conditional, const Instruction& original,
                 std::vector<Computation*> branches) {
  if (original.has_attr("branch_computations")) {
    SetCallees(conditional, "branch_computations", std::move(branches));
  } else {
    SetCallees(conditional, "true_computation", {branches[0]});
    SetCallees(conditional, "false_computation", {branches[1]});
  }
}

}  // namespace sharc::spmd
