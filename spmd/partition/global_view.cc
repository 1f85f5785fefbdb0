#include "spmd/partition/global_view.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharc::spmd {

using hlo::Instruction;
using hlo::Sharding;

bool IsCustomCallTo(const Instruction& inst, std::string_view target) {
  return inst.opcode() == hlo::Opcode::kCustomCall &&
         inst.attr_string("custom_call_target") == target;
}

Sharding ShardingOf(const Instruction& inst) {
  return inst.sharding() ? *inst.sharding() : Sharding::Replicated();
}

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
  std::vector<std::string> parts;
  for (const auto& g : groups) parts.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ReplicaGroupsOf(const Instruction& inst) {
  const std::string text = inst.has_attr("backend_config") ? inst.attr_string("backend_config") : "";
  auto bad = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(
        "backend_config of ", inst.name(), " must list replica groups as {{0,1},{2,3}}, got \"",
        text, "\""));
  };
  std::vector<std::vector<int64_t>> groups;
  size_t i = 0;
  auto skip_space = [&]() {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i++] != '{') return bad();
  while (true) {
    skip_space();
    if (i < text.size() && text[i] == '}') break;
    if (i >= text.size() || text[i++] != '{') return bad();
    std::vector<int64_t> group;
    while (true) {
      skip_space();
      if (i < text.size() && text[i] == '}') break;
      size_t start = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (start == i || i - start > 12) return bad();
      group.push_back(std::stoll(text.substr(start, i - start)));
      skip_space();
      if (i < text.size() && text[i] == ',') ++i;
    }
    ++i;  // '}'
    groups.push_back(std::move(group));
    skip_space();
    if (i < text.size() && text[i] == ',') ++i;
  }
  if (groups.empty()) return bad();
  return groups;
}

}  // namespace sharc::spmd
