#include "absl/strings/str_cat.h"
#include "autodiff/transpose_rule.h"

namespace sharc::autodiff {

bool Cotangent::zero() const {
  if (value != nullptr) return false;
  for (const Cotangent& e : elements) {
    if (!e.zero()) return false;
  }
  return true;
}

std::vector<Cotangent> NoCotangents(const Instruction& inst) {
  return std::vector<Cotangent>(static_cast<size_t>(inst.operand_count()));
}

void TransposeRuleRegistry::Register(Opcode opcode, TransposeFn fn) {
  auto rule = std::make_unique<TransposeRule>();
  rule->transpose = std::move(fn);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

void TransposeRuleRegistry::RegisterNotLinear(Opcode opcode) {
  RegisterUnsupported(opcode, "it is not a linear function of its operands");
}

void TransposeRuleRegistry::RegisterUnsupported(Opcode opcode, std::string reason) {
  auto rule = std::make_unique<TransposeRule>();
  rule->unsupported_reason = std::move(reason);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

const TransposeRule* TransposeRuleRegistry::Find(Opcode opcode) const {
  return rules_[static_cast<size_t>(opcode)].get();
}

const TransposeRule* FindTransposeRule(Opcode opcode) {
  static const TransposeRuleRegistry* registry = [] {
    auto* r = new TransposeRuleRegistry();
    RegisterElementwiseTransposeRules(*r);
    RegisterShapeTransposeRules(*r);
    RegisterIndexingTransposeRules(*r);
    RegisterReductionTransposeRules(*r);
    RegisterConvolutionTransposeRule(*r);
    RegisterControlFlowTransposeRules(*r);
    RegisterWhileTransposeRule(*r);
    RegisterMapReduceTransposeRules(*r);
    RegisterShardMapTransposeRules(*r);
    RegisterLinalgTransposeRules(*r);
    RegisterComplexTransposeRules(*r);
    RegisterSelectAndScatterTransposeRule(*r);
    return r;
  }();
  return registry->Find(opcode);
}

}  // namespace sharc::autodiff
