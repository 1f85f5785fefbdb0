// ragged-dot in its three modes, ragged-all-to-all, stochastic-convert,
// complex/real/imag, the combined collective-permute and dynamic-slice with
// its start indices as one vector: shapes, refusals, and results checked
// against values computed by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hlo/passes/lower_for_compute.h"
#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/hlo/ops_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::ops_test::F32;
using ::sharc::hlo::ops_test::FakeEvalContext;
using ::sharc::hlo::ops_test::OpTestModule;
using ::sharc::hlo::ops_test::S32;
using ::sharc::hlo::ops_test::ToVector;
using ::sharc::hlo::ops_test::Values;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

auto Invalid(const char* text) {
  return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(std::string(text)));
}

// ------------------------------------------------------------ ragged-dot --

TEST(RaggedDotTest, NonContractingPicksEachRowsGroup) {
  OpTestModule t;
  Instruction* lhs = t.Param(F32({4, 2}));
  Instruction* rhs = t.Param(F32({2, 2, 3}));
  Instruction* sizes = t.Param(S32({2}));
  Instruction* dot = t.AddInferred(Opcode::kRaggedDot, {lhs, rhs, sizes},
                                   {{"lhs_contracting_dims", IntList{1}},
                                    {"rhs_contracting_dims", IntList{1}},
                                    {"lhs_ragged_dims", IntList{0}},
                                    {"rhs_group_dims", IntList{0}}});
  ASSERT_EQ(dot->shape(), F32({4, 3}));
  // Group 0 maps [a, b] to [a, b, 0]; group 1 to [b, b, a + b].
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*dot, {Values<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                 Values<float>({2, 2, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}),
                                 Values<int32_t>({2}, {1, 2})}));
  // Row 0 is group 0, rows 1-2 group 1, row 3 no group (zeros).
  EXPECT_THAT(ToVector<float>(out), ElementsAre(1, 2, 0, 4, 4, 7, 6, 6, 11, 0, 0, 0));
}

TEST(RaggedDotTest, ContractingGivesOneResultPerGroup) {
  OpTestModule t;
  Instruction* lhs = t.Param(F32({2, 3}));
  Instruction* rhs = t.Param(F32({3, 2}));
  Instruction* sizes = t.Param(S32({2}));
  Instruction* dot = t.AddInferred(Opcode::kRaggedDot, {lhs, rhs, sizes},
                                   {{"lhs_contracting_dims", IntList{1}},
                                    {"rhs_contracting_dims", IntList{0}},
                                    {"lhs_ragged_dims", IntList{1}}});
  ASSERT_EQ(dot->shape(), F32({2, 2, 2}));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*dot, {Values<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                     Values<float>({3, 2}, {1, 0, 0, 1, 1, 1}),
                                     Values<int32_t>({2}, {2, 1})}));
  // Group 0 contracts k = 0, 1; group 1 contracts k = 2.
  EXPECT_THAT(ToVector<float>(out), ElementsAre(1, 2, 4, 5, 3, 3, 6, 6));
}

TEST(RaggedDotTest, BatchModeZeroesBatchesNoGroupHolds) {
  OpTestModule t;
  Instruction* lhs = t.Param(F32({3, 1, 2}));
  Instruction* rhs = t.Param(F32({3, 2, 1}));
  Instruction* sizes = t.Param(S32({2}));
  Instruction* dot = t.AddInferred(
      Opcode::kRaggedDot, {lhs, rhs, sizes},
      {{"lhs_batch_dims", IntList{0}}, {"rhs_batch_dims", IntList{0}},
       {"lhs_contracting_dims", IntList{2}}, {"rhs_contracting_dims", IntList{1}},
       {"lhs_ragged_dims", IntList{0}}});
  ASSERT_EQ(dot->shape(), F32({3, 1, 1}));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*dot, {Values<float>({3, 1, 2}, {1, 2, 3, 4, 5, 6}),
                                     Values<float>({3, 2, 1}, {1, 1, 1, 1, 1, 1}),
                                     Values<int32_t>({2}, {1, 1})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(3, 7, 0));
}

TEST(RaggedDotTest, GroupSizesPerBatch) {
  OpTestModule t;
  Instruction* lhs = t.Param(F32({2, 2, 1}));
  Instruction* rhs = t.Param(F32({2, 2, 1, 1}));
  const std::vector<Attribute> attrs = {
      {"lhs_batch_dims", IntList{0}},       {"rhs_batch_dims", IntList{1}},
      {"lhs_contracting_dims", IntList{2}}, {"rhs_contracting_dims", IntList{2}},
      {"lhs_ragged_dims", IntList{1}},      {"rhs_group_dims", IntList{0}}};
  Instruction* dot = t.AddInferred(Opcode::kRaggedDot, {lhs, rhs, t.Param(S32({2, 2}))}, attrs);
  ASSERT_EQ(dot->shape(), F32({2, 2, 1}));
  // Batch 0 puts both rows in group 0 (x10), batch 1 both in group 1 (x100).
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*dot, {Values<float>({2, 2, 1}, {1, 2, 3, 4}),
                                     Values<float>({2, 2, 1, 1}, {10, 10, 100, 100}),
                                     Values<int32_t>({2, 2}, {2, 0, 0, 2})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(10, 20, 300, 400));
  Instruction* bad = t.Add(Opcode::kRaggedDot, {lhs, rhs, t.Param(S32({3, 2}))}, attrs);
  EXPECT_THAT(t.Infer(*bad), Invalid("needs group_sizes of shape [g] or [2,g]"));
}

TEST(RaggedDotTest, RefusesInconsistentDims) {
  OpTestModule t;
  Instruction* lhs = t.Param(F32({4, 2}));
  Instruction* rhs = t.Param(F32({3, 2, 5}));
  Instruction* sizes = t.Param(S32({2}));
  Instruction* groups = t.Add(Opcode::kRaggedDot, {lhs, rhs, sizes},
                              {{"lhs_contracting_dims", IntList{1}},
                               {"rhs_contracting_dims", IntList{1}},
                               {"lhs_ragged_dims", IntList{0}},
                               {"rhs_group_dims", IntList{0}}});
  EXPECT_THAT(t.Infer(*groups), Invalid("rhs group dim 0 has size 3 but group_sizes holds 2"));
  Instruction* no_group = t.Add(Opcode::kRaggedDot, {lhs, rhs, sizes},
                                {{"lhs_contracting_dims", IntList{1}},
                                 {"rhs_contracting_dims", IntList{1}},
                                 {"lhs_ragged_dims", IntList{0}}});
  EXPECT_THAT(t.Infer(*no_group), Invalid("needs exactly one rhs_group_dims"));
  Instruction* two = t.Add(Opcode::kRaggedDot, {lhs, rhs, sizes},
                           {{"lhs_contracting_dims", IntList{1}},
                            {"rhs_contracting_dims", IntList{1}},
                            {"lhs_ragged_dims", IntList{0, 1}}});
  EXPECT_THAT(t.Infer(*two), Invalid("needs exactly one lhs_ragged_dims"));
}

// ----------------------------------------------------- ragged-all-to-all --

TEST(RaggedAllToAllTest, WritesEachSendersRowsAtTheirOffsets) {
  OpTestModule t;
  t.module().mutable_config().num_partitions = 2;
  std::vector<Instruction*> operands = {t.Param(F32({4})), t.Param(F32({4}))};
  for (int i = 0; i < 4; ++i) operands.push_back(t.Param(S32({2})));
  Instruction* a2a = t.AddInferred(Opcode::kRaggedAllToAll, operands,
                                   {{"channel_id", int64_t{1}},
                                    {"replica_groups", IntListList{{0, 1}}}});
  ASSERT_EQ(a2a->shape(), F32({4}));
  EXPECT_OK(t.Verify(*a2a));
  // (input, input_offsets, send_sizes, output_offsets) of each device.
  auto sent = [](std::vector<float> input, std::vector<int32_t> in_offsets,
                 std::vector<int32_t> sizes, std::vector<int32_t> out_offsets) {
    return Literal::Tuple({Values<float>({4}, input), Values<int32_t>({2}, in_offsets),
                           Values<int32_t>({2}, sizes), Values<int32_t>({2}, out_offsets)});
  };
  std::vector<Literal> devices = {sent({1, 2, 3, 4}, {0, 1}, {1, 3}, {0, 0}),
                                  sent({5, 6, 7, 8}, {0, 2}, {2, 1}, {1, 3})};
  std::vector<std::vector<float>> expected = {{1, 5, 6, -1}, {2, 3, 4, 7}};
  for (int64_t d = 0; d < 2; ++d) {
    FakeEvalContext ctx(d, 2);
    ctx.device_values = devices;
    const Literal& mine = devices[static_cast<size_t>(d)];
    ASSERT_OK_AND_ASSIGN(
        Literal out, t.Eval(*a2a, {mine.element(0), Values<float>({4}, {-1, -1, -1, -1}),
                                   mine.element(1), mine.element(2), mine.element(3),
                                   Values<int32_t>({2}, {0, 0})},
                            &ctx));
    EXPECT_EQ(ToVector<float>(out), expected[static_cast<size_t>(d)]) << "device " << d;
  }
  // Rows past the receiver's output are refused, naming the sender.
  devices[1] = sent({5, 6, 7, 8}, {0, 2}, {2, 2}, {1, 3});
  FakeEvalContext ctx(1, 2);
  ctx.device_values = devices;
  const Literal& mine = devices[1];
  EXPECT_THAT(t.Eval(*a2a, {mine.element(0), Values<float>({4}, {0, 0, 0, 0}), mine.element(1),
                            mine.element(2), mine.element(3), Values<int32_t>({2}, {0, 0})},
                     &ctx),
              Invalid("device 1 sends 2 rows from row 2 of its 4 to rows starting at 3 of 4"));
}

TEST(RaggedAllToAllTest, RefusesMismatchedOperands) {
  OpTestModule t;
  std::vector<Instruction*> operands = {t.Param(F32({4, 2})), t.Param(F32({6, 3}))};
  for (int i = 0; i < 4; ++i) operands.push_back(t.Param(S32({2})));
  EXPECT_THAT(t.Infer(*t.Add(Opcode::kRaggedAllToAll, operands)), Invalid("differ in dim 1"));
  operands[1] = t.Param(F32({6, 2}));
  operands[5] = t.Param(F32({2}));
  EXPECT_THAT(t.Infer(*t.Add(Opcode::kRaggedAllToAll, operands)),
              Invalid("operand 5 (offsets and sizes) must be s32[n] or s64[n]"));
}

// ---------------------------------------------------- stochastic-convert --

TEST(StochasticConvertTest, RoundsUpWhenTheRandomBitsAreBelowTheFraction) {
  OpTestModule t;
  Instruction* x = t.Param(F32({7}));
  Instruction* bits = t.Param(Shape(PrimitiveType::kU32, {7}));
  Instruction* q = t.Add(Opcode::kStochasticConvert, {x, bits}, {},
                         Shape(PrimitiveType::kS8, {7}));
  ASSERT_OK_AND_ASSIGN(Shape inferred, t.Infer(*q));
  ASSERT_EQ(inferred, Shape(PrimitiveType::kS8, {7}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // The fraction .25 is 2^30 out of 2^32.
  ASSERT_OK_AND_ASSIGN(
      Literal out,
      t.Eval(*q, {Values<float>({7}, {1.25f, 1.25f, -1.25f, -1.25f, 300, -300, nan}),
                  Values<uint32_t>({7}, {1u << 29, 1u << 31, 1u << 29, 1u << 31, 0, 0, 0})}));
  EXPECT_THAT(ToVector<int8_t>(out), ElementsAre(2, 1, -2, -1, 127, -128, 0));
  Instruction* narrow = t.Add(Opcode::kStochasticConvert, {x, t.Param(Shape(PrimitiveType::kU16, {7}))},
                              {}, Shape(PrimitiveType::kS8, {7}));
  EXPECT_THAT(t.Infer(*narrow), Invalid("needs random bits of an unsigned type as wide as f32"));
  Instruction* to_float = t.Add(Opcode::kStochasticConvert, {x, bits}, {}, F32({7}));
  EXPECT_THAT(t.Infer(*to_float), Invalid("converts to signed integer types only"));
}

// ------------------------------------------------------ complex, real, imag --

TEST(ComplexOpsTest, ShapesAndTheRealCases) {
  OpTestModule t;
  Instruction* re = t.Param(F32({2}));
  Instruction* z = t.AddInferred(Opcode::kComplex, {re, re});
  EXPECT_EQ(z->shape(), Shape(PrimitiveType::kC64, {2}));
  EXPECT_EQ(t.AddInferred(Opcode::kReal, {z})->shape(), F32({2}));
  Instruction* d = t.Param(Shape(PrimitiveType::kF64, {3}));
  EXPECT_EQ(t.AddInferred(Opcode::kImag, {t.AddInferred(Opcode::kComplex, {d, d})})->shape(),
            Shape(PrimitiveType::kF64, {3}));
  EXPECT_THAT(t.Infer(*t.Add(Opcode::kComplex, {re, d})), Invalid("needs two f32 or two f64"));
  EXPECT_THAT(t.Infer(*t.Add(Opcode::kReal, {t.Param(S32({2}))})),
              Invalid("needs a complex or floating-point operand"));
  // Of a real float, real is the value and imag is zero.
  Instruction* real = t.AddInferred(Opcode::kReal, {re});
  Instruction* imag = t.AddInferred(Opcode::kImag, {re});
  ASSERT_OK_AND_ASSIGN(Literal r, t.Eval(*real, {Values<float>({2}, {1.5f, -2})}));
  ASSERT_OK_AND_ASSIGN(Literal i, t.Eval(*imag, {Values<float>({2}, {1.5f, -2})}));
  EXPECT_THAT(ToVector<float>(r), ElementsAre(1.5f, -2));
  EXPECT_THAT(ToVector<float>(i), ElementsAre(0, 0));
}

// ------------------------------------------- combined collective-permute --

TEST(CombinedCollectivePermuteTest, PermutesEveryOperandTogether) {
  OpTestModule t;
  t.module().mutable_config().num_partitions = 2;
  Instruction* a = t.Param(F32({2}));
  Instruction* b = t.Param(S32({1}));
  Instruction* cp = t.AddInferred(Opcode::kCollectivePermute, {a, b},
                                  {{"channel_id", int64_t{1}},
                                   {"source_target_pairs", IntListList{{0, 1}, {1, 0}}}});
  ASSERT_EQ(cp->shape(), Shape::Tuple({F32({2}), S32({1})}));
  EXPECT_OK(t.Verify(*cp));
  FakeEvalContext ctx(0, 2);
  ctx.device_values = {Literal(), Literal::Tuple({Values<float>({2}, {5, 6}),
                                                  Values<int32_t>({1}, {7})})};
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*cp, {Values<float>({2}, {1, 2}), Values<int32_t>({1}, {3})}, &ctx));
  EXPECT_EQ(ctx.exchanges, 1);
  EXPECT_THAT(ToVector<float>(out.element(0)), ElementsAre(5, 6));
  EXPECT_THAT(ToVector<int32_t>(out.element(1)), ElementsAre(7));
}

// The combined form becomes one collective-permute per operand, and vector
// start indices become scalars, before anything computes; the interpreter
// gives the same values either way.
TEST(LowerForComputeTest, SplitsCombinedPermutesAndStartIndexVectors) {
  const char* text = R"(HloModule m, num_partitions=2
ENTRY %e {
  %x = f32[4,3] parameter(0)
  %y = s32[2] parameter(1)
  %v = s32[2] constant({1, 2})
  %s = f32[2,1] dynamic-slice(%x, %v), dynamic_slice_sizes={2,1}
  %u = f32[4,3] dynamic-update-slice(%x, %s, %v)
  ROOT %p = (f32[4,3], s32[2]) collective-permute(%u, %y), source_target_pairs={{0,1},{1,0}}
})";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseModule(text));
  ASSERT_OK(LowerForCompute(*module));
  const std::string printed = PrintModule(*module);
  EXPECT_THAT(printed, HasSubstr("%p.0 = f32[4,3] collective-permute(%u)"));
  EXPECT_THAT(printed, HasSubstr("%p.1 = s32[2] collective-permute(%y)"));
  EXPECT_THAT(printed, HasSubstr("ROOT %p = (f32[4,3], s32[2]) tuple(%p.0, %p.1)"));
  EXPECT_THAT(printed, HasSubstr("dynamic-slice(%x, %s.start0, %s.start1)"));
  EXPECT_THAT(printed, HasSubstr("%s.start1.slice = s32[1] slice(%v), slice={[1:2]}"));
}

TEST(DynamicSliceTest, StartIndicesAsOneVector) {
  OpTestModule t;
  Instruction* x = t.Param(F32({3, 4}));
  Instruction* starts = t.Param(S32({2}));
  Instruction* ds = t.AddInferred(Opcode::kDynamicSlice, {x, starts},
                                  {{"dynamic_slice_sizes", IntList{2, 2}}});
  ASSERT_EQ(ds->shape(), F32({2, 2}));
  Literal value = Values<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // Starts (2, 3) clamp to (1, 2), as the scalar form does.
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*ds, {value, Values<int32_t>({2}, {2, 3})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(6, 7, 10, 11));
  Instruction* update = t.Param(F32({1, 2}));
  Instruction* dus = t.AddInferred(Opcode::kDynamicUpdateSlice, {x, update, starts});
  ASSERT_EQ(dus->shape(), F32({3, 4}));
  ASSERT_OK_AND_ASSIGN(Literal updated, t.Eval(*dus, {value, Values<float>({1, 2}, {-1, -2}),
                                                      Values<int32_t>({2}, {0, 1})}));
  EXPECT_THAT(ToVector<float>(updated), ElementsAre(0, -1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  Instruction* wrong = t.Add(Opcode::kDynamicSlice, {x, t.Param(S32({3}))},
                             {{"dynamic_slice_sizes", IntList{2, 2}}});
  EXPECT_THAT(t.Infer(*wrong), Invalid("takes 1 + rank (2) = 3 operands, got 2"));
}

}  // namespace
}  // namespace sharc::hlo
