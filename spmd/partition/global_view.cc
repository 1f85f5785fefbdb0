#include "spmd/partition/global_view.h"

#include "absl/strings/str_cat.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Sharding;

std::string FreshGlobalName(const hlo::Computation& comp, const std::string& base) {
  if (comp.FindInstruction(base) == nullptr) return base;
  for (int64_t i = 1;; ++i) {
    std::string name = absl::StrCat(base, ".", i);
    if (comp.FindInstruction(name) == nullptr) return name;
  }
}

Instruction* AddGlobalView(hlo::Computation& comp, std::string_view target, Instruction* operand,
                           const Sharding& sharding, const std::string& name) {
  auto inst = Instruction::Create(hlo::Opcode::kCustomCall, FreshGlobalName(comp, name),
                                  operand->shape(), {operand});
  inst->set_attr("custom_call_target", std::string(target));
  inst->set_sharding(sharding);
  inst->set_location(operand->location());
  return comp.AddInstruction(std::move(inst));
}

std::string FormatReplicaGroups(const std::vector<std::vector<int64_t>>& groups) {
  return hlo::PrintAttributeValue(groups, hlo::AttrKind::kReplicaGroups);
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroupsOf(const Instruction& inst) {
  const std::string text = inst.has_attr("backend_config") ? inst.attr_string("backend_config") : "";
  absl::StatusOr<hlo::IntListList> groups = hlo::ParseReplicaGroups(text);
  if (!groups.ok() || groups->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "backend_config of ", inst.name(), " must list replica groups as {{0,1},{2,3}}, got \"",
        text, "\"", groups.ok() ? "" : absl::StrCat(" (", groups.status().message(), ")")));
  }
  return *groups;
}

}  // namespace sharc::spmd
