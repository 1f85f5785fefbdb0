// Computation: an SSA function of instructions with parameters and a root.
// The instruction list is kept in definition order (operands first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hlo/ir/instruction.h"

namespace sharc::hlo {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  Module* parent() const { return parent_; }

  // Appends an instruction (its operands must already be in this
  // computation). Parameters are also indexed by their number.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instruction);
  // Inserts before `before` in the instruction order.
  Instruction* AddInstructionBefore(std::unique_ptr<Instruction> instruction,
                                    const Instruction* before);
  // Removes an instruction that has no users and is not the root.
  absl::Status RemoveInstruction(Instruction* instruction);

  // Instructions in definition order.
  std::vector<Instruction*> instructions() const;
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  Instruction* root() const { return root_; }
  void set_root(Instruction* root) { root_ = root; }
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  Instruction* parameter(int64_t i) const { return parameters_[static_cast<size_t>(i)]; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  Instruction* FindInstruction(std::string_view name) const;

  // Restores definition order after rewrites that appended operands late
  // (stable topological sort of the instruction list).
  void SortInDefinitionOrder();

 private:
  friend class Module;
  std::string name_;
  std::vector<std::unique_ptr<Instruction>> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  Module* parent_ = nullptr;
};

}  // namespace sharc::hlo
