#include "hlo/passes/call_inliner.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace sharc::hlo {
namespace {

bool Inlinable(const Instruction& call) {
  if (call.opcode() != Opcode::kCall || call.has_sharding() || !call.backend_config().empty() ||
      !call.frontend_attributes().empty()) {
    return false;
  }
  const Computation* callee = call.attr_computation("to_apply");
  if (callee == nullptr || callee == call.parent()) return false;
  for (const Instruction* param : callee->parameters()) {
    if (param->has_sharding()) return false;
  }
  return true;
}

// Names already taken in `computation`, so copies get fresh ones.
class Names {
 public:
  explicit Names(const Computation& computation) {
    for (const Instruction* inst : computation.instructions()) taken_.insert(inst->name());
  }
  std::string Fresh(const std::string& name) {
    std::string candidate = name;
    for (int n = 1; taken_.contains(candidate); ++n) candidate = absl::StrCat(name, ".", n);
    taken_.insert(candidate);
    return candidate;
  }

 private:
  absl::flat_hash_set<std::string> taken_;
};

// Copies the callee's body in front of `call`, then makes the call's users
// read the copied root and removes the call.
void InlineCall(Computation& caller, Instruction* call, Names& names) {
  const Computation& callee = *call->attr_computation("to_apply");
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) copies[callee.parameter(i)] = call->operand(i);
  for (const Instruction* inst : callee.instructions()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (const Instruction* operand : inst->operands()) operands.push_back(copies.at(operand));
    copies[inst] =
        caller.AddInstructionBefore(inst->CloneWithOperands(names.Fresh(inst->name()), operands), call);
  }
  call->ReplaceAllUsesWith(copies.at(callee.root()));
  (void)caller.RemoveInstruction(call);  // cannot fail: no users, not the root
}

bool IsCalled(const Module& module, const Computation* computation) {
  for (const Computation* comp : module.computations()) {
    for (const Instruction* inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (callee == computation) return true;
      }
    }
  }
  return false;
}

}  // namespace

void InlineCallSite(Computation& caller, Instruction* call) {
  Names names(caller);
  InlineCall(caller, call, names);
}

absl::StatusOr<bool> CallInliner::Run(Module& module) {
  bool changed = false;
  absl::flat_hash_set<Computation*> inlined_callees;
  // A body copied in may hold calls of its own; they are inlined on the
  // next sweep. Call graphs are acyclic (the verifier), so this ends.
  for (bool again = true; again;) {
    again = false;
    for (Computation* comp : module.computations()) {
      Names names(*comp);
      for (Instruction* inst : comp->instructions()) {
        if (!Inlinable(*inst)) continue;
        inlined_callees.insert(inst->attr_computation("to_apply"));
        InlineCall(*comp, inst, names);
        again = changed = true;
      }
    }
  }
  // A callee goes once nothing calls it; removing one may free another
  // (a body that called it), so repeat until none goes.
  std::vector<Computation*> candidates(inlined_callees.begin(), inlined_callees.end());
  for (bool removed = true; removed;) {
    removed = false;
    for (auto it = candidates.begin(); it != candidates.end(); ++it) {
      if (*it == module.entry() || IsCalled(module, *it)) continue;
      module.RemoveComputation(*it);
      candidates.erase(it);
      removed = true;
      break;
    }
  }
  return changed;
}

}  // namespace sharc::hlo
