// The lowering table covers every opcode: each has a Halide lowering or an
// explicit reason it has none (which is what users see).
#include "codegen/kernel_graph.h"
#include "gtest/gtest.h"
#include "hlo/ir/opcode.h"

namespace sharc::codegen {
namespace {

TEST(LoweringTableTest, EveryOpcodeHasALoweringOrAReason) {
  int lowered = 0;
  for (int i = 0; i < hlo::kNumOpcodes; ++i) {
    const auto op = static_cast<hlo::Opcode>(i);
    ASSERT_TRUE(HasLoweringRule(op)) << "no Halide lowering rule for " << hlo::OpcodeName(op);
    if (UnsupportedReason(op).empty()) ++lowered;
  }
  // The ops the issue names first must lower.
  for (hlo::Opcode op : {hlo::Opcode::kAdd, hlo::Opcode::kBroadcast, hlo::Opcode::kReshape,
                         hlo::Opcode::kTranspose, hlo::Opcode::kSlice, hlo::Opcode::kPad,
                         hlo::Opcode::kConcatenate, hlo::Opcode::kReverse, hlo::Opcode::kIota,
                         hlo::Opcode::kConstant, hlo::Opcode::kConvert, hlo::Opcode::kSelect,
                         hlo::Opcode::kCompare, hlo::Opcode::kReduce, hlo::Opcode::kDot,
                         hlo::Opcode::kGather, hlo::Opcode::kScatter,
                         hlo::Opcode::kReduceWindow}) {
    EXPECT_EQ(UnsupportedReason(op), "") << hlo::OpcodeName(op);
  }
  EXPECT_GE(lowered, 50);
}

TEST(LoweringTableTest, UnsupportedOpsExplainThemselves) {
  EXPECT_NE(UnsupportedReason(hlo::Opcode::kAllReduce).find("runtime"), std::string::npos);
  EXPECT_NE(UnsupportedReason(hlo::Opcode::kWhile).find("control flow"), std::string::npos);
}

}  // namespace
}  // namespace sharc::codegen
