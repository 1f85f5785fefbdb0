#include "codegen/kernel_graph.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"

namespace sharc::codegen {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// `text` with every %name in `rename` replaced.
std::string Rename(const std::string& text,
                   const absl::flat_hash_map<std::string, std::string>& rename) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '%') {
      out += text[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() && IsNameChar(text[j])) ++j;
    std::string name = text.substr(i + 1, j - i - 1);
    auto it = rename.find(name);
    out += it == rename.end() ? text.substr(i, j - i) : it->second;
    i = j;
  }
  return out;
}

std::string ComputationText(const hlo::Computation& c) {
  std::string out = absl::StrCat("{", c.name(), ":");
  for (const hlo::Instruction* inst : c.instructions()) absl::StrAppend(&out, inst->ToString(), ";");
  return out + "}";
}

}  // namespace

absl::StatusOr<KernelGraph> GraphForInstruction(const hlo::Instruction& instruction) {
  if (!instruction.shape().is_array()) {
    return LoweringError(instruction, "a kernel must produce an array");
  }
  KernelGraph g;
  g.name = instruction.name();
  for (const hlo::Instruction* op : instruction.operands()) {
    if (!op->shape().is_array()) return LoweringError(instruction, "tuple operands are not kernel inputs");
    g.inputs.push_back(op);
  }
  g.body = {&instruction};
  g.outputs = {&instruction};
  return g;
}

absl::StatusOr<KernelGraph> GraphForComputation(const hlo::Computation& computation) {
  KernelGraph g;
  g.name = computation.name();
  for (const hlo::Instruction* p : computation.parameters()) {
    if (!p->shape().is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fused computation '", computation.name(), "' has a tuple parameter ", p->name()));
    }
    g.inputs.push_back(p);
  }
  const hlo::Instruction* root = computation.root();
  if (root == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("computation '", computation.name(), "' has no root"));
  }
  for (const hlo::Instruction* inst : computation.instructions()) {
    if (inst->opcode() == hlo::Opcode::kParameter) continue;
    if (inst == root && inst->opcode() == hlo::Opcode::kTuple) continue;
    g.body.push_back(inst);
  }
  if (root->opcode() == hlo::Opcode::kTuple) {
    g.tuple_output = true;
    for (const hlo::Instruction* op : root->operands()) {
      if (!op->shape().is_array()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "fused computation '", computation.name(), "' returns a nested tuple"));
      }
      g.outputs.push_back(op);
    }
  } else {
    if (!root->shape().is_array()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fused computation '", computation.name(), "' returns a non-array"));
    }
    g.outputs.push_back(root);
  }
  return g;
}

absl::Status CheckLowerable(const hlo::Instruction& inst) {
  const LoweringRule* rule = FindLoweringRule(inst.opcode());
  if (rule == nullptr) {
    return LoweringError(inst, absl::StrCat("op ", hlo::OpcodeName(inst.opcode()), " has no lowering rule"));
  }
  if (!rule->lower) return LoweringError(inst, rule->unsupported_reason);
  if (!inst.shape().is_array()) return LoweringError(inst, "a kernel value must be an array");
  for (const hlo::Instruction* op : inst.operands()) {
    if (!op->shape().is_array()) return LoweringError(inst, "tuple operands are not kernel inputs");
  }
  if (rule->supports) {
    if (absl::Status s = rule->supports(inst); !s.ok()) return s;
  }
  return CheckIndexable(inst);
}

absl::Status CheckLowerable(const KernelGraph& graph) {
  for (const hlo::Instruction* inst : graph.body) {
    absl::Status s = CheckLowerable(*inst);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string CanonicalText(const KernelGraph& graph) {
  absl::flat_hash_map<std::string, std::string> rename;
  std::string out;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    rename[graph.inputs[i]->name()] = absl::StrCat("%in", i);
    absl::StrAppend(&out, "in", i, ": ", graph.inputs[i]->shape().ToString(), "\n");
  }
  for (size_t i = 0; i < graph.body.size(); ++i) {
    rename[graph.body[i]->name()] = absl::StrCat("%v", i);
  }
  for (const hlo::Instruction* inst : graph.body) {
    absl::StrAppend(&out, Rename(inst->ToString(), rename), "\n");
    for (const hlo::Computation* c : inst->called_computations()) {
      absl::StrAppend(&out, "  calls ", ComputationText(*c), "\n");
    }
  }
  absl::StrAppend(&out, graph.tuple_output ? "tuple " : "", "outputs:");
  for (const hlo::Instruction* o : graph.outputs) {
    auto it = rename.find(o->name());
    absl::StrAppend(&out, " ", it == rename.end() ? o->name() : it->second);
  }
  return out + "\n";
}

}  // namespace sharc::codegen
