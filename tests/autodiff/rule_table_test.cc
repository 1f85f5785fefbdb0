// The rule tables are complete: every opcode has a JVP entry (a rule, a zero
// derivative, or an unsupported reason) and a transpose entry (a rule, or a
// reason such as "not linear"), so a new op cannot silently lack one.
#include <gtest/gtest.h>

#include "autodiff/jvp_rule.h"
#include "autodiff/transpose_rule.h"
#include "hlo/ir/opcode.h"

namespace sharc::autodiff {
namespace {

TEST(RuleTableTest, EveryOpHasAJvpEntry) {
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    const auto op = static_cast<Opcode>(i);
    const JvpRule* rule = FindJvpRule(op);
    ASSERT_NE(rule, nullptr) << hlo::OpcodeName(op) << " has no JVP entry";
    const bool defined = rule->tangent || rule->primal_and_tangent || rule->zero_derivative ||
                         !rule->unsupported_reason.empty();
    EXPECT_TRUE(defined) << hlo::OpcodeName(op);
  }
}

TEST(RuleTableTest, EveryOpHasATransposeEntry) {
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    const auto op = static_cast<Opcode>(i);
    const TransposeRule* rule = FindTransposeRule(op);
    ASSERT_NE(rule, nullptr) << hlo::OpcodeName(op) << " has no transpose entry";
    EXPECT_TRUE(rule->transpose || !rule->unsupported_reason.empty()) << hlo::OpcodeName(op);
  }
}

// Ops whose JVP is linear in some operand must be transposable, or reverse
// mode would fail on them.
TEST(RuleTableTest, LinearOpsHaveTransposeRules) {
  for (Opcode op : {Opcode::kAdd, Opcode::kSubtract, Opcode::kNegate, Opcode::kMultiply,
                    Opcode::kDivide, Opcode::kSelect, Opcode::kConvert, Opcode::kCopy,
                    Opcode::kBroadcast, Opcode::kReshape, Opcode::kTranspose, Opcode::kSlice,
                    Opcode::kPad, Opcode::kConcatenate, Opcode::kReverse, Opcode::kDynamicSlice,
                    Opcode::kDynamicUpdateSlice, Opcode::kGather, Opcode::kScatter, Opcode::kDot,
                    Opcode::kReduce, Opcode::kTuple, Opcode::kGetTupleElement, Opcode::kCall,
                    Opcode::kConditional, Opcode::kWhile, Opcode::kCustomCall,
                    Opcode::kMapReduceBroadcast, Opcode::kMapReduceMap, Opcode::kMapReduceSum,
                    Opcode::kMapReduceMean, Opcode::kComplex, Opcode::kReal, Opcode::kImag,
                    Opcode::kFft, Opcode::kSelectAndScatter}) {
    EXPECT_TRUE(FindTransposeRule(op)->transpose) << hlo::OpcodeName(op);
  }
}

}  // namespace
}  // namespace sharc::autodiff
