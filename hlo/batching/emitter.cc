#include "hlo/batching/emitter.h"

#include "absl/strings/str_cat.h"

namespace sharc::hlo {

Emitter::Emitter(Computation* computation) : computation_(computation) {
  for (const Instruction* inst : computation->instructions()) used_.insert(inst->name());
}

void Emitter::Claim(Instruction* inst, const std::string& name) {
  if (reserved_.erase(name) == 0 || used_.contains(name)) return;
  used_.erase(inst->name());
  inst->set_name(name);
  used_.insert(name);
}

std::string Emitter::UniqueName(const std::string& base) {
  int64_t& suffix = next_suffix_[base];
  while (true) {
    std::string candidate = absl::StrCat(base, ".", ++suffix);
    if (!used_.contains(candidate) && !reserved_.contains(candidate)) {
      used_.insert(candidate);
      return candidate;
    }
  }
}

Instruction* Emitter::Add(std::unique_ptr<Instruction> inst, bool keep_name) {
  if (keep_name && !used_.contains(inst->name())) {
    used_.insert(inst->name());
  } else {
    inst->set_name(UniqueName(OpcodeName(inst->opcode())));
  }
  if (origin_ != nullptr) {
    if (!inst->location().known()) inst->set_location(origin_->location());
    if (inst->metadata().empty()) inst->mutable_metadata() = origin_->metadata();
  }
  Instruction* added = computation_->AddInstruction(std::move(inst));
  added_.push_back(added);
  return added;
}

Instruction* Emitter::Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                          std::vector<Attribute> attributes) {
  auto inst = Instruction::Create(opcode, "", std::move(shape), std::move(operands));
  for (Attribute& a : attributes) inst->set_attr(std::move(a.name), std::move(a.value));
  return Add(std::move(inst));
}

}  // namespace sharc::hlo
