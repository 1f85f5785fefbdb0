// Source op definitions: parameter, constant, iota, partition-id, replica-id.
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/ops/op_def.h"
#include "tests/hlo/op_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::testing::FakeEvalContext;
using ::sharc::hlo::testing::Lit;
using ::sharc::hlo::testing::OpHarness;
using ::sharc::hlo::testing::Values;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(SourceOpsTest, ParameterInfersDeclaredShapeAndRefusesEvaluation) {
  auto param = Instruction::CreateParameter(0, "p", Shape(PrimitiveType::kF32, {2}));
  const OpDef& def = GetOpDef(Opcode::kParameter);
  EXPECT_EQ(def.syntax, OperandSyntax::kParameterNumber);
  ASSERT_OK_AND_ASSIGN(Shape s, def.infer_shape(*param));
  EXPECT_EQ(s, Shape(PrimitiveType::kF32, {2}));
  FakeEvalContext context;
  EXPECT_THAT(def.evaluate(*param, {}, context),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("bound by the interpreter")));
  auto tuple_param = Instruction::CreateParameter(
      1, "t", Shape::Tuple({Shape(PrimitiveType::kS32, {}), Shape(PrimitiveType::kF32, {3})}));
  EXPECT_OK(def.infer_shape(*tuple_param));
}

TEST(SourceOpsTest, ConstantReturnsItsLiteral) {
  Literal value = Lit<int32_t>({2, 2}, {1, 2, 3, 4});
  auto constant = Instruction::CreateConstant("c", value);
  const OpDef& def = GetOpDef(Opcode::kConstant);
  EXPECT_EQ(def.syntax, OperandSyntax::kLiteral);
  ASSERT_OK_AND_ASSIGN(Shape s, def.infer_shape(*constant));
  EXPECT_EQ(s, value.shape());
  FakeEvalContext context;
  ASSERT_OK_AND_ASSIGN(Literal out, def.evaluate(*constant, {}, context));
  EXPECT_EQ(out, value);

  constant->set_shape(Shape(PrimitiveType::kS32, {4}));
  EXPECT_THAT(def.infer_shape(*constant),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("literal has shape s32[2,2] but the instruction declares s32[4]")));
}

TEST(SourceOpsTest, IotaCountsAlongItsDimension) {
  OpHarness h;
  ASSERT_OK_AND_ASSIGN(Literal cols, h.Run(Opcode::kIota, Shape(PrimitiveType::kS32, {2, 3}), {},
                                           {{"iota_dimension", int64_t{1}}}));
  EXPECT_THAT(Values<int32_t>(cols), ElementsAre(0, 1, 2, 0, 1, 2));
  ASSERT_OK_AND_ASSIGN(Literal rows, h.Run(Opcode::kIota, Shape(PrimitiveType::kS32, {2, 3}), {},
                                           {{"iota_dimension", int64_t{0}}}));
  EXPECT_THAT(Values<int32_t>(rows), ElementsAre(0, 0, 0, 1, 1, 1));
  ASSERT_OK_AND_ASSIGN(Literal halves, h.Run(Opcode::kIota, Shape(PrimitiveType::kF16, {3}), {},
                                             {{"iota_dimension", int64_t{0}}}));
  EXPECT_EQ(static_cast<float>(halves.data<Half>()[2]), 2.0f);
  ASSERT_OK_AND_ASSIGN(Literal empty, h.Run(Opcode::kIota, Shape(PrimitiveType::kU8, {0, 4}), {},
                                            {{"iota_dimension", int64_t{1}}}));
  EXPECT_EQ(empty.num_elements(), 0);

  Instruction* bad = h.Op(Opcode::kIota, Shape(PrimitiveType::kS32, {2, 3}), {},
                          {{"iota_dimension", int64_t{2}}});
  EXPECT_THAT(OpHarness::Infer(bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("iota_dimension 2 is out of range for rank-2 output")));
  Instruction* scalar = h.Op(Opcode::kIota, Shape(PrimitiveType::kS32, {}), {},
                             {{"iota_dimension", int64_t{0}}});
  EXPECT_THAT(OpHarness::Infer(scalar), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 HasSubstr("out of range for rank-0")));
  Instruction* pred = h.Op(Opcode::kIota, Shape(PrimitiveType::kPred, {2}), {},
                           {{"iota_dimension", int64_t{0}}});
  EXPECT_THAT(OpHarness::Infer(pred), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("numeric element type")));
  Instruction* missing = h.Op(Opcode::kIota, Shape(PrimitiveType::kS32, {2}), {});
  EXPECT_THAT(OpHarness::Infer(missing), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("iota_dimension")));
}

TEST(SourceOpsTest, PartitionAndReplicaIdComeFromTheContext) {
  auto pid = Instruction::Create(Opcode::kPartitionId, "pid", Shape(PrimitiveType::kU32, {}));
  auto rid = Instruction::Create(Opcode::kReplicaId, "rid", Shape(PrimitiveType::kU32, {}));
  FakeEvalContext context(/*partition_id=*/3, /*replica_id=*/5);
  ASSERT_OK_AND_ASSIGN(Shape s, GetOpDef(Opcode::kPartitionId).infer_shape(*pid));
  EXPECT_EQ(s, Shape(PrimitiveType::kU32, {}));
  ASSERT_OK_AND_ASSIGN(Literal p, GetOpDef(Opcode::kPartitionId).evaluate(*pid, {}, context));
  EXPECT_EQ(p, Literal::Scalar<uint32_t>(3));
  ASSERT_OK_AND_ASSIGN(Literal r, GetOpDef(Opcode::kReplicaId).evaluate(*rid, {}, context));
  EXPECT_EQ(r, Literal::Scalar<uint32_t>(5));
  // A wrongly declared shape is caught by comparing with the inferred u32[].
  auto bad = Instruction::Create(Opcode::kPartitionId, "bad", Shape(PrimitiveType::kS32, {}));
  ASSERT_OK_AND_ASSIGN(Shape inferred, GetOpDef(Opcode::kPartitionId).infer_shape(*bad));
  EXPECT_NE(inferred, bad->shape());
}

}  // namespace
}  // namespace sharc::hlo
