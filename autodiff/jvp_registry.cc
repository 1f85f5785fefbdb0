#include "autodiff/jvp_rule.h"

namespace sharc::autodiff {

Instruction* JvpArgs::TangentOrZeros(JvpContext& ctx, int64_t i) const {
  Instruction* t = tangents[static_cast<size_t>(i)];
  return t != nullptr ? t : Zeros(ctx.tangent(), primals[static_cast<size_t>(i)]->shape());
}

void JvpRuleRegistry::Register(Opcode opcode, TangentFn fn) {
  auto rule = std::make_unique<JvpRule>();
  rule->tangent = std::move(fn);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

void JvpRuleRegistry::RegisterPrimalAndTangent(Opcode opcode, PrimalAndTangentFn fn) {
  auto rule = std::make_unique<JvpRule>();
  rule->primal_and_tangent = std::move(fn);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

void JvpRuleRegistry::RegisterZeroDerivative(Opcode opcode) {
  auto rule = std::make_unique<JvpRule>();
  rule->zero_derivative = true;
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

void JvpRuleRegistry::RegisterUnsupported(Opcode opcode, std::string reason) {
  auto rule = std::make_unique<JvpRule>();
  rule->unsupported_reason = std::move(reason);
  rules_[static_cast<size_t>(opcode)] = std::move(rule);
}

const JvpRule* JvpRuleRegistry::Find(Opcode opcode) const {
  return rules_[static_cast<size_t>(opcode)].get();
}

const JvpRule* FindJvpRule(Opcode opcode) {
  static const JvpRuleRegistry* registry = [] {
    auto* r = new JvpRuleRegistry();
    RegisterSourceJvpRules(*r);
    RegisterElementwiseJvpRules(*r);
    RegisterShapeJvpRules(*r);
    RegisterReductionJvpRules(*r);
    RegisterControlFlowJvpRules(*r);
    RegisterWhileJvpRule(*r);
    RegisterMapReduceJvpRules(*r);
    RegisterShardMapJvpRules(*r);
    RegisterSortAndTokenJvpRules(*r);
    RegisterLinalgJvpRules(*r);
    return r;
  }();
  return registry->Find(opcode);
}

}  // namespace sharc::autodiff
