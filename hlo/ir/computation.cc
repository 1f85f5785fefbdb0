#include "hlo/ir/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace sharc::hlo {

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  instruction->parent_ = this;
  Instruction* raw = instruction.get();
  if (raw->opcode() == Opcode::kParameter) {
    int64_t n = raw->parameter_number();
    if (n >= 0) {
      if (static_cast<int64_t>(parameters_.size()) <= n) parameters_.resize(n + 1, nullptr);
      parameters_[n] = raw;
    }
  }
  instructions_.push_back(std::move(instruction));
  return raw;
}

Instruction* Computation::AddInstructionBefore(std::unique_ptr<Instruction> instruction,
                                               const Instruction* before) {
  Instruction* raw = AddInstruction(std::move(instruction));
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const std::unique_ptr<Instruction>& p) { return p.get() == before; });
  if (it != instructions_.end()) {
    std::unique_ptr<Instruction> moved = std::move(instructions_.back());
    instructions_.pop_back();
    instructions_.insert(it, std::move(moved));
  }
  return raw;
}

absl::Status Computation::RemoveInstruction(Instruction* instruction) {
  if (!instruction->users().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it still has users"));
  }
  if (instruction == root_) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", instruction->name(), ": it is the root"));
  }
  instruction->DetachFromOperands();
  if (instruction->opcode() == Opcode::kParameter) {
    for (Instruction*& p : parameters_) {
      if (p == instruction) p = nullptr;
    }
  }
  instructions_.erase(
      std::remove_if(instructions_.begin(), instructions_.end(),
                     [&](const std::unique_ptr<Instruction>& p) { return p.get() == instruction; }),
      instructions_.end());
  return absl::OkStatus();
}

std::vector<Instruction*> Computation::instructions() const {
  std::vector<Instruction*> out;
  out.reserve(instructions_.size());
  for (const auto& p : instructions_) out.push_back(p.get());
  return out;
}

Instruction* Computation::FindInstruction(std::string_view name) const {
  for (const auto& p : instructions_) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

void Computation::SortInDefinitionOrder() {
  absl::flat_hash_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < instructions_.size(); ++i) position[instructions_[i].get()] = i;
  std::vector<std::unique_ptr<Instruction>> sorted;
  sorted.reserve(instructions_.size());
  absl::flat_hash_set<const Instruction*> placed;
  // Iterative DFS in original order so the result is stable.
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (auto& p : instructions_) {
    // Entries already moved into `sorted` (operands placed early) are null.
    if (p == nullptr || placed.contains(p.get())) continue;
    stack.push_back({p.get(), 0});
    absl::flat_hash_set<const Instruction*> on_stack;
    on_stack.insert(p.get());
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      if (next < inst->operands().size()) {
        Instruction* op = inst->operands()[next++];
        if (!placed.contains(op) && !on_stack.contains(op) && position.contains(op)) {
          stack.push_back({op, 0});
          on_stack.insert(op);
        }
        continue;
      }
      placed.insert(inst);
      on_stack.erase(inst);
      sorted.push_back(std::move(instructions_[position[inst]]));
      stack.pop_back();
    }
  }
  instructions_ = std::move(sorted);
}

}  // namespace sharc::hlo
