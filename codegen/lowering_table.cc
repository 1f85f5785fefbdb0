// The lowering table: built once from the family files, keyed by opcode.
#include "absl/strings/str_cat.h"
#include "codegen/kernel_graph.h"
#include "codegen/lowering.h"

namespace sharc::codegen {

void LoweringTable::Add(hlo::Opcode opcode, LowerFn lower, SupportsFn supports) {
  auto i = static_cast<size_t>(opcode);
  rules_[i] = LoweringRule{opcode, std::move(lower), "", std::move(supports)};
  present_[i] = true;
}

void LoweringTable::AllowTupleResult(hlo::Opcode opcode) {
  rules_[static_cast<size_t>(opcode)].tuple_result = true;
}

void LoweringTable::MarkCheap(std::initializer_list<hlo::Opcode> opcodes) {
  for (hlo::Opcode opcode : opcodes) rules_[static_cast<size_t>(opcode)].cheap = true;
}

void LoweringTable::MarkComputeBound(std::initializer_list<hlo::Opcode> opcodes) {
  for (hlo::Opcode opcode : opcodes) rules_[static_cast<size_t>(opcode)].compute_bound = true;
}

void LoweringTable::AddUnsupported(hlo::Opcode opcode, std::string reason) {
  auto i = static_cast<size_t>(opcode);
  rules_[i] = LoweringRule{opcode, nullptr, std::move(reason), nullptr};
  present_[i] = true;
}

const LoweringRule* LoweringTable::Find(hlo::Opcode opcode) const {
  auto i = static_cast<size_t>(opcode);
  return i < present_.size() && present_[i] ? &rules_[i] : nullptr;
}

const LoweringRule* FindLoweringRule(hlo::Opcode opcode) {
  static const LoweringTable* table = [] {
    auto* t = new LoweringTable();
    RegisterElementwiseLowerings(*t);
    RegisterShapeLowerings(*t);
    RegisterSourceLowerings(*t);
    RegisterReduceLowerings(*t);
    RegisterGatherScatterLowerings(*t);
    RegisterDotLowering(*t);
    RegisterConvolutionLowering(*t);
    RegisterCustomCallLowering(*t);
    RegisterSelectAndScatterLowering(*t);
    RegisterUnsupportedOps(*t);
    return t;
  }();
  return table->Find(opcode);
}

}  // namespace sharc::codegen

namespace sharc::codegen {

// For tests and tools that must not include Halide.h (see lowering_table_test).
bool HasLoweringRule(hlo::Opcode opcode) { return FindLoweringRule(opcode) != nullptr; }

std::string UnsupportedReason(hlo::Opcode opcode) {
  const LoweringRule* rule = FindLoweringRule(opcode);
  return rule == nullptr ? "no rule" : rule->unsupported_reason;
}

bool IsComputeBoundOp(hlo::Opcode opcode) {
  const LoweringRule* rule = FindLoweringRule(opcode);
  return rule != nullptr && rule->compute_bound;
}

}  // namespace sharc::codegen
