#include "codegen/kernel_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/lowering.h"
#include "hlo/base/status_macros.h"
#include "hlo/ir/narrow_types.h"

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

// A called computation's text and, after it, that of every computation it
// reaches (a reducer's `call` prints only the callee's name, and two
// modules may give one name different bodies), each once.
void AppendComputationText(const hlo::Computation& c,
                           absl::flat_hash_set<const hlo::Computation*>& seen, std::string& out) {
  if (!seen.insert(&c).second) return;
  absl::StrAppend(&out, "{", c.name(), ":");
  for (const hlo::Instruction* inst : c.instructions()) absl::StrAppend(&out, inst->ToString(), ";");
  absl::StrAppend(&out, "}");
  for (const hlo::Instruction* inst : c.instructions()) {
    for (const hlo::Computation* callee : inst->called_computations()) {
      AppendComputationText(*callee, seen, out);
    }
  }
}

std::string ComputationText(const hlo::Computation& c) {
  absl::flat_hash_set<const hlo::Computation*> seen;
  std::string out;
  AppendComputationText(c, seen, out);
  return out;
}

// Adds `inst` as the kernel's output, element by element if it is a tuple
// of arrays (then the kernel's output buffer is a tuple).
absl::Status AddOutputs(KernelGraph& g, const hlo::Instruction* inst) {
  if (inst->shape().is_array()) {
    g.outputs.push_back(inst);
    g.output_elements.push_back(-1);
    return absl::OkStatus();
  }
  for (int64_t k = 0; k < inst->shape().tuple_size(); ++k) {
    if (!inst->shape().tuple_shape(k).is_array()) {
      return LoweringError(*inst, "a kernel cannot produce a nested tuple");
    }
    g.outputs.push_back(inst);
    g.output_elements.push_back(k);
  }
  g.tuple_output = true;
  return absl::OkStatus();
}

}  // namespace

const hlo::Shape& OutputShape(const KernelGraph& graph, size_t k) {
  const int64_t e = OutputElement(graph, k);
  return e < 0 ? graph.outputs[k]->shape() : graph.outputs[k]->shape().tuple_shape(e);
}

int64_t OutputElement(const KernelGraph& graph, size_t k) {
  return k < graph.output_elements.size() ? graph.output_elements[k] : -1;
}

absl::StatusOr<KernelGraph> GraphForInstruction(const hlo::Instruction& instruction) {
  KernelGraph g;
  g.name = instruction.name();
  for (const hlo::Instruction* op : instruction.operands()) {
    if (!op->shape().is_array()) return LoweringError(instruction, "tuple operands are not kernel inputs");
    g.inputs.push_back(op);
  }
  g.body = {&instruction};
  if (absl::Status s = AddOutputs(g, &instruction); !s.ok()) return s;
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
      g.output_elements.push_back(-1);
    }
  } else if (absl::Status s = AddOutputs(g, root); !s.ok()) {
    return s;
  }
  return g;
}

absl::Status CheckLowerable(const hlo::Instruction& inst) {
  const LoweringRule* rule = FindLoweringRule(inst.opcode());
  if (rule == nullptr) {
    return LoweringError(inst, absl::StrCat("op ", hlo::OpcodeName(inst.opcode()), " has no lowering rule"));
  }
  if (!rule->lower) return LoweringError(inst, rule->unsupported_reason);
  // Halide has no complex or 8-bit float type: such values run on the
  // interpreter's kernels (hlo/ops/complex_semantics.cc,
  // narrow_type_semantics.cc).
  auto is_complex = [](const hlo::Instruction* value) {
    return value->shape().is_array() && hlo::IsComplex(value->shape().type());
  };
  if (is_complex(&inst) || std::any_of(inst.operands().begin(), inst.operands().end(), is_complex)) {
    return LoweringError(inst, "complex values have no Halide lowering");
  }
  auto is_narrow = [](const hlo::Instruction* value) {
    return value->shape().is_array() && hlo::IsNarrowType(value->shape().type());
  };
  if (is_narrow(&inst) || std::any_of(inst.operands().begin(), inst.operands().end(), is_narrow)) {
    return LoweringError(inst, "narrow types (f8, f4, s4, ...) have no Halide lowering");
  }
  // The op's own reason first: it says more than the generic checks below.
  if (rule->supports) {
    if (absl::Status s = rule->supports(inst); !s.ok()) return s;
  }
  if (!inst.shape().is_array() && !rule->tuple_result) {
    return LoweringError(inst, "a kernel value must be an array");
  }
  for (const hlo::Instruction* op : inst.operands()) {
    if (!op->shape().is_array()) return LoweringError(inst, "tuple operands are not kernel inputs");
  }
  return CheckIndexable(inst);
}

absl::Status CheckLowerable(const KernelGraph& graph) {
  for (const hlo::Instruction* inst : graph.body) {
    RETURN_IF_ERROR(CheckLowerable(*inst));
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
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const hlo::Instruction* o = graph.outputs[k];
    auto it = rename.find(o->name());
    absl::StrAppend(&out, " ", it == rename.end() ? o->name() : it->second);
    if (OutputElement(graph, k) >= 0) absl::StrAppend(&out, "#", OutputElement(graph, k));
  }
  return out + "\n";
}

}  // namespace sharc::codegen
