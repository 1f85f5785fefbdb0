// How each op propagates is data (spmd/propagation_ops.cc): the table's
// lines for XLA's special cases, the elementwise entry from the op table's
// trait, and the generic entry for any other op with a factor rule. The
// last is what lets an op added with a rule propagate with no edit to
// propagation: the MapReduce ops have rules and no line, and shardings
// cross them through their rules both ways.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/ops/op_def.h"
#include "spmd/propagation_internal.h"
#include "tests/spmd/propagation_test_util.h"

namespace sharc::spmd {
namespace {

using testing_util::ExpectSharding;
using testing_util::PropagationTest;

class PropagationTableTest : public PropagationTest {};

TEST_F(PropagationTableTest, AnOpWithARuleAndNoLinePropagatesThroughItsRuleForward) {
  // mapreduce.sum reduces the clients dim (a reduction factor) and passes
  // the others through: the operand's split of dim 1 reaches the result.
  ASSERT_TRUE(Run(R"(HloModule m, num_partitions=2, mesh={clients=2}
ENTRY %e {
  %x = f32[4,8] parameter(0), sharding={devices=[1,2]0,1}
  %s = f32[8] mapreduce.sum(%x), placement=clients
  ROOT %n = f32[8] negate(%s)
})"));
  ExpectSharding(module(), "s", "{devices=[2]0,1}");
}

TEST_F(PropagationTableTest, AnOpWithARuleAndNoLinePropagatesThroughItsRuleBackward) {
  ASSERT_TRUE(Run(R"(HloModule m, num_partitions=2, mesh={clients=2}
ENTRY %e {
  %x = f32[4,8] parameter(0)
  %a = f32[4,8] abs(%x)
  %s = f32[8] mapreduce.sum(%a), placement=clients, sharding={devices=[2]0,1}
  ROOT %n = f32[8] negate(%s)
})"));
  ExpectSharding(module(), "a", "{devices=[1,2]0,1}");
}

TEST(PropagationEntryTest, ComesFromTheTableTheTraitOrTheRule) {
  auto module = std::make_unique<hlo::Module>("m");
  auto* comp = module->AddComputation(std::make_unique<hlo::Computation>("e"));
  module->set_entry(comp);
  hlo::Shape f32x4(hlo::PrimitiveType::kF32, {4});
  hlo::Instruction* x = comp->AddInstruction(hlo::Instruction::CreateParameter(0, "x", f32x4));
  hlo::Instruction* neg =
      comp->AddInstruction(hlo::Instruction::Create(hlo::Opcode::kNegate, "neg", f32x4, {x}));
  hlo::Instruction* rev =
      comp->AddInstruction(hlo::Instruction::Create(hlo::Opcode::kReverse, "rev", f32x4, {neg}));
  rev->set_attr("dimensions", hlo::IntList{0});
  hlo::Instruction* sorted =
      comp->AddInstruction(hlo::Instruction::Create(hlo::Opcode::kSort, "sort", f32x4, {rev}));
  sorted->set_attr("dimensions", hlo::IntList{0});
  hlo::Instruction* bits = comp->AddInstruction(hlo::Instruction::Create(
      hlo::Opcode::kBitcastConvert, "bits", hlo::Shape(hlo::PrimitiveType::kS32, {4}), {sorted}));
  internal::State state;
  state.module = module.get();
  // The trait: every elementwise op, with no line of its own.
  EXPECT_EQ(internal::PropagationOf(*neg, state).forward, &internal::ForwardElementwise);
  EXPECT_EQ(internal::PropagationOf(*neg, state).min_level, 0);
  // A line of the table: XLA's own step for reverse.
  EXPECT_EQ(internal::PropagationOf(*rev, state).forward, &internal::ForwardReverse);
  EXPECT_TRUE(internal::PropagationOf(*rev, state).partitionable);
  // XLA's step for sort (like its representative operand, unless that
  // splits the sort dim with nowhere to move it).
  EXPECT_EQ(internal::PropagationOf(*sorted, state).forward, &internal::ForwardSort);
  // A line that keeps an op with a rule whole.
  EXPECT_FALSE(internal::PropagationOf(*bits, state).partitionable);
}

}  // namespace
}  // namespace sharc::spmd
