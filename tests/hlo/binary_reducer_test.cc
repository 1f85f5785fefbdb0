// The one recogniser of plain binary reducers (hlo::MatchBinaryReducer in
// hlo/ops/op_util.h), which the evaluator, the runtime's collectives and
// autodiff share: what it accepts, and that xor, which it once refused while
// the Halide backend accepted it, now takes the evaluator's fast path with
// the reducer's own answer.
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/ops/op_util.h"
#include "tests/hlo/ops_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::ops_test::FakeEvalContext;
using ::sharc::hlo::ops_test::OpTestModule;
using ::sharc::hlo::ops_test::S32;
using ::sharc::hlo::ops_test::ToVector;
using ::sharc::hlo::ops_test::Values;
using ::testing::ElementsAre;

constexpr PrimitiveType kF32 = PrimitiveType::kF32;
constexpr PrimitiveType kS32 = PrimitiveType::kS32;
constexpr PrimitiveType kPred = PrimitiveType::kPred;

TEST(MatchBinaryReducerTest, AcceptsTheSevenPlainOpsOnIntegers) {
  OpTestModule t;
  for (Opcode op : {Opcode::kAdd, Opcode::kMultiply, Opcode::kMaximum, Opcode::kMinimum,
                    Opcode::kAnd, Opcode::kOr, Opcode::kXor}) {
    EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", op, kS32)), op) << OpcodeName(op);
  }
  EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", Opcode::kXor, kPred)), Opcode::kXor);
}

TEST(MatchBinaryReducerTest, RefusesBitwiseOpsOnFloatsAndOtherShapes) {
  OpTestModule t;
  EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", Opcode::kXor, kF32)), std::nullopt);
  EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", Opcode::kAnd, kF32)), std::nullopt);
  EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", Opcode::kSubtract, kS32)), std::nullopt);
  EXPECT_EQ(MatchBinaryReducer(*t.BinaryComputation("r", Opcode::kAdd, kF32)), Opcode::kAdd);

  // Both operands the same parameter: not a reducer of two values.
  Computation* twice = t.NewComputation("twice");
  Instruction* a = t.Param(Shape::Scalar(kS32), twice);
  t.Param(Shape::Scalar(kS32), twice);
  twice->set_root(t.Add(Opcode::kXor, {a, a}, {}, Shape::Scalar(kS32), twice));
  EXPECT_EQ(MatchBinaryReducer(*twice), std::nullopt);

  // Parameters in either order are the same (every matched op commutes).
  Computation* swapped = t.NewComputation("swapped");
  Instruction* p0 = t.Param(Shape::Scalar(kS32), swapped);
  Instruction* p1 = t.Param(Shape::Scalar(kS32), swapped);
  swapped->set_root(t.Add(Opcode::kXor, {p1, p0}, {}, Shape::Scalar(kS32), swapped));
  EXPECT_EQ(MatchBinaryReducer(*swapped), Opcode::kXor);
}

TEST(MatchBinaryReducerTest, XorReduceTakesTheFastPathWithTheReducersAnswer) {
  OpTestModule t;
  Computation* x = t.BinaryComputation("xor", Opcode::kXor, kS32);
  Instruction* in = t.Param(S32({2, 3}));
  Instruction* init = t.Param(S32({}));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {in, init}, {{"dimensions", IntList{1}}, {"to_apply", x}});
  FakeEvalContext ctx;
  ASSERT_OK_AND_ASSIGN(
      Literal out,
      t.Eval(*r, {Values<int32_t>({2, 3}, {1, 2, 4, 7, 7, -1}), Literal::Scalar<int32_t>(8)},
             &ctx));
  EXPECT_THAT(ToVector<int32_t>(out), ElementsAre(8 ^ 1 ^ 2 ^ 4, 8 ^ 7 ^ 7 ^ -1));
  EXPECT_EQ(ctx.calls, 0) << "a xor reducer should take the fast path";

  Computation* pxor = t.BinaryComputation("pxor", Opcode::kXor, kPred);
  Instruction* bits = t.Param(Shape(kPred, {3}));
  Instruction* no = t.Param(Shape::Scalar(kPred));
  Instruction* parity = t.AddInferred(Opcode::kReduce, {bits, no},
                                      {{"dimensions", IntList{0}}, {"to_apply", pxor}});
  Literal three_true(Shape(kPred, {3}));
  for (bool& bit : three_true.data<bool>()) bit = true;
  ASSERT_OK_AND_ASSIGN(Literal odd,
                       t.Eval(*parity, {three_true, Literal::Scalar(false)}, &ctx));
  EXPECT_TRUE(odd.data<bool>()[0]);
  EXPECT_EQ(ctx.calls, 0);
}

// The identity of each reducer: -0 for a float add (a +0 would turn a -0
// it is added to into +0), the type's extremes for maximum and minimum.
TEST(BinaryReducerIdentityTest, IsTheValueThatChangesNothing) {
  std::optional<Literal> add = BinaryReducerIdentity(Opcode::kAdd, kF32);
  ASSERT_TRUE(add.has_value());
  EXPECT_TRUE(std::signbit(add->GetAsDouble(0)));
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kAdd, kS32)->GetAsInt64(0), 0);
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kMultiply, kS32)->GetAsInt64(0), 1);
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kMaximum, PrimitiveType::kS8)->GetAsInt64(0), -128);
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kMaximum, PrimitiveType::kS64)->GetAsInt64(0),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kMinimum, PrimitiveType::kU32)->GetAsInt64(0),
            std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(BinaryReducerIdentity(Opcode::kMinimum, kF32)->GetAsDouble(0),
            std::numeric_limits<double>::infinity());
  EXPECT_FALSE(BinaryReducerIdentity(Opcode::kMaximum, kPred).has_value());
  EXPECT_FALSE(BinaryReducerIdentity(Opcode::kSubtract, kF32).has_value());
}

}  // namespace
}  // namespace sharc::hlo
