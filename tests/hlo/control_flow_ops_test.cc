// tuple, get-tuple-element, call, while, conditional and custom-call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
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

TEST(TupleTest, BuildsAndIndexes) {
  OpTestModule t;
  Instruction* a = t.Param(F32({2}));
  Instruction* b = t.Param(S32({}));
  Instruction* tuple = t.AddInferred(Opcode::kTuple, {a, b});
  EXPECT_EQ(tuple->shape(), Shape::Tuple({F32({2}), S32({})}));
  Instruction* empty = t.AddInferred(Opcode::kTuple, {});
  EXPECT_EQ(empty->shape(), Shape::Tuple({}));
  Instruction* gte = t.AddInferred(Opcode::kGetTupleElement, {tuple}, {{"index", int64_t{1}}});
  EXPECT_EQ(gte->shape(), S32({}));

  ASSERT_OK_AND_ASSIGN(Literal packed,
                       t.Eval(*tuple, {Values<float>({2}, {1, 2}), Literal::Scalar<int32_t>(7)}));
  ASSERT_OK_AND_ASSIGN(Literal second, t.Eval(*gte, {packed}));
  EXPECT_EQ(second.data<int32_t>()[0], 7);

  Instruction* bad = t.Add(Opcode::kGetTupleElement, {tuple}, {{"index", int64_t{2}}});
  EXPECT_THAT(t.Infer(*bad), Invalid("index 2 is out of range for a tuple of 2 elements"));
  Instruction* neg = t.Add(Opcode::kGetTupleElement, {tuple}, {{"index", int64_t{-1}}});
  EXPECT_THAT(t.Infer(*neg), Invalid("out of range"));
  Instruction* not_tuple = t.Add(Opcode::kGetTupleElement, {a}, {{"index", int64_t{0}}});
  EXPECT_THAT(t.Infer(*not_tuple), Invalid("must be a tuple"));
}

TEST(CallTest, EvaluatesCallee) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
  Instruction* a = t.Param(F32({}));
  Instruction* b = t.Param(F32({}));
  Instruction* call = t.AddInferred(Opcode::kCall, {a, b}, {{"to_apply", add}});
  EXPECT_EQ(call->shape(), F32({}));
  EXPECT_OK(t.Verify(*call));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*call, {Literal::Scalar<float>(2), Literal::Scalar<float>(3)}));
  EXPECT_EQ(out.data<float>()[0], 5);

  Instruction* wrong = t.AddInferred(Opcode::kCall, {a, t.Param(S32({}))}, {{"to_apply", add}});
  EXPECT_THAT(t.Verify(*wrong), Invalid("parameter 1 is f32[], expected s32[]"));
  Instruction* few = t.AddInferred(Opcode::kCall, {a}, {{"to_apply", add}});
  EXPECT_THAT(t.Verify(*few), Invalid("takes 2 parameters, expected 1"));
  Instruction* none = t.Add(Opcode::kCall, {a});
  EXPECT_THAT(t.Infer(*none), Invalid("missing its to_apply"));
}

// A while loop whose state (i, x) runs i = 0..10 adding 2.5 to x each time.
class WhileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = Shape::Tuple({S32({}), F32({})});
    cond_ = t_.NewComputation("cond");
    Instruction* cp = t_.Param(state_, cond_);
    Instruction* ci =
        t_.Add(Opcode::kGetTupleElement, {cp}, {{"index", int64_t{0}}}, S32({}), cond_);
    Instruction* ten = t_.Constant(Literal::Scalar<int32_t>(10), cond_);
    t_.Add(Opcode::kCompare, {ci, ten}, {{"direction", std::string("LT")}},
           Shape::Scalar(PrimitiveType::kPred), cond_);

    body_ = t_.NewComputation("body");
    Instruction* bp = t_.Param(state_, body_);
    Instruction* bi =
        t_.Add(Opcode::kGetTupleElement, {bp}, {{"index", int64_t{0}}}, S32({}), body_);
    Instruction* bx =
        t_.Add(Opcode::kGetTupleElement, {bp}, {{"index", int64_t{1}}}, F32({}), body_);
    Instruction* one = t_.Constant(Literal::Scalar<int32_t>(1), body_);
    Instruction* step = t_.Constant(Literal::Scalar<float>(2.5f), body_);
    Instruction* ni = t_.Add(Opcode::kAdd, {bi, one}, {}, S32({}), body_);
    Instruction* nx = t_.Add(Opcode::kAdd, {bx, step}, {}, F32({}), body_);
    t_.Add(Opcode::kTuple, {ni, nx}, {}, state_, body_);
  }

  OpTestModule t_;
  Shape state_;
  Computation* cond_ = nullptr;
  Computation* body_ = nullptr;
};

TEST_F(WhileTest, CountsToTen) {
  Instruction* init = t_.Param(state_);
  Instruction* loop =
      t_.AddInferred(Opcode::kWhile, {init}, {{"condition", cond_}, {"body", body_}});
  EXPECT_EQ(loop->shape(), state_);
  EXPECT_OK(t_.Verify(*loop));
  Literal start = Literal::Tuple({Literal::Scalar<int32_t>(0), Literal::Scalar<float>(1)});
  ASSERT_OK_AND_ASSIGN(Literal out, t_.Eval(*loop, {start}));
  EXPECT_EQ(out.element(0).data<int32_t>()[0], 10);
  EXPECT_EQ(out.element(1).data<float>()[0], 26);
  // A state that already fails the condition is returned unchanged.
  Literal done = Literal::Tuple({Literal::Scalar<int32_t>(50), Literal::Scalar<float>(1)});
  ASSERT_OK_AND_ASSIGN(Literal same, t_.Eval(*loop, {done}));
  EXPECT_EQ(same, done);
}

TEST_F(WhileTest, RejectsMismatchedSignatures) {
  Instruction* scalar = t_.Param(S32({}));
  Instruction* loop =
      t_.AddInferred(Opcode::kWhile, {scalar}, {{"condition", cond_}, {"body", body_}});
  EXPECT_THAT(t_.Verify(*loop), Invalid("condition computation 'cond' parameter 0"));
  // The body must return the loop state; the condition must return pred[].
  Instruction* init = t_.Param(state_);
  Instruction* swapped =
      t_.AddInferred(Opcode::kWhile, {init}, {{"condition", body_}, {"body", cond_}});
  EXPECT_THAT(t_.Verify(*swapped), Invalid("returns (s32[], f32[]), expected pred[]"));
  Instruction* no_body = t_.AddInferred(Opcode::kWhile, {init}, {{"condition", cond_}});
  EXPECT_THAT(t_.Verify(*no_body), Invalid("missing its body"));
  EXPECT_THAT(t_.Eval(*no_body, {Literal(state_)}), Invalid("missing its body"));
}

class ConditionalTest : public ::testing::Test {
 protected:
  // Branches over f32[2]: negate, identity (via copy), and add-to-self.
  void SetUp() override {
    for (Opcode op : {Opcode::kNegate, Opcode::kCopy}) {
      Computation* c = t_.NewComputation(op == Opcode::kNegate ? "neg" : "copy");
      Instruction* p = t_.Param(F32({2}), c);
      t_.Add(op, {p}, {}, F32({2}), c);
      branches_.push_back(c);
    }
    Computation* twice = t_.NewComputation("twice");
    Instruction* p = t_.Param(F32({2}), twice);
    t_.Add(Opcode::kAdd, {p, p}, {}, F32({2}), twice);
    branches_.push_back(twice);
  }

  OpTestModule t_;
  std::vector<Computation*> branches_;
};

TEST_F(ConditionalTest, PredicatedForm) {
  Instruction* pred = t_.Param(Shape::Scalar(PrimitiveType::kPred));
  Instruction* a = t_.Param(F32({2}));
  Instruction* b = t_.Param(F32({2}));
  Instruction* cond =
      t_.AddInferred(Opcode::kConditional, {pred, a, b},
                     {{"true_computation", branches_[0]}, {"false_computation", branches_[2]}});
  EXPECT_EQ(cond->shape(), F32({2}));
  EXPECT_OK(t_.Verify(*cond));
  Literal x = Values<float>({2}, {1, 2});
  Literal y = Values<float>({2}, {10, 20});
  ASSERT_OK_AND_ASSIGN(Literal t_out, t_.Eval(*cond, {Literal::Scalar<bool>(true), x, y}));
  EXPECT_THAT(ToVector<float>(t_out), ElementsAre(-1, -2));
  ASSERT_OK_AND_ASSIGN(Literal f_out, t_.Eval(*cond, {Literal::Scalar<bool>(false), x, y}));
  EXPECT_THAT(ToVector<float>(f_out), ElementsAre(20, 40));
}

TEST_F(ConditionalTest, IndexedFormRunsLastBranchWhenOutOfRange) {
  Instruction* index = t_.Param(S32({}));
  std::vector<Instruction*> operands = {index, t_.Param(F32({2})), t_.Param(F32({2})),
                                        t_.Param(F32({2}))};
  Instruction* cond =
      t_.AddInferred(Opcode::kConditional, operands, {{"branch_computations", branches_}});
  EXPECT_EQ(cond->shape(), F32({2}));
  EXPECT_OK(t_.Verify(*cond));
  Literal x = Values<float>({2}, {1, 2});
  Literal y = Values<float>({2}, {3, 4});
  Literal z = Values<float>({2}, {5, 6});
  auto run = [&](int32_t i) { return t_.Eval(*cond, {Literal::Scalar<int32_t>(i), x, y, z}); };
  ASSERT_OK_AND_ASSIGN(Literal b0, run(0));
  EXPECT_THAT(ToVector<float>(b0), ElementsAre(-1, -2));
  ASSERT_OK_AND_ASSIGN(Literal b1, run(1));
  EXPECT_THAT(ToVector<float>(b1), ElementsAre(3, 4));
  ASSERT_OK_AND_ASSIGN(Literal b7, run(7));
  EXPECT_THAT(ToVector<float>(b7), ElementsAre(10, 12));
  ASSERT_OK_AND_ASSIGN(Literal bneg, run(-1));
  EXPECT_THAT(ToVector<float>(bneg), ElementsAre(10, 12));
}

TEST_F(ConditionalTest, RejectsMalformedForms) {
  Instruction* pred = t_.Param(Shape::Scalar(PrimitiveType::kPred));
  Instruction* index = t_.Param(S32({}));
  Instruction* a = t_.Param(F32({2}));
  Instruction* s = t_.Param(S32({2}));
  Instruction* missing =
      t_.Add(Opcode::kConditional, {pred, a, a}, {{"true_computation", branches_[0]}});
  EXPECT_THAT(t_.Infer(*missing), Invalid("needs true_computation and false_computation"));
  Instruction* mixed =
      t_.Add(Opcode::kConditional, {index, a, a},
             {{"true_computation", branches_[0]}, {"false_computation", branches_[1]}});
  EXPECT_THAT(t_.Infer(*mixed), Invalid("takes branch_computations"));
  Instruction* count =
      t_.Add(Opcode::kConditional, {index, a}, {{"branch_computations", branches_}});
  EXPECT_THAT(t_.Infer(*count), Invalid("has 3 branches but 1 branch operands"));
  Instruction* selector =
      t_.Add(Opcode::kConditional, {a, a, a}, {{"branch_computations", branches_}});
  EXPECT_THAT(t_.Infer(*selector), Invalid("selector must be pred[] or s32[]"));
  Instruction* operand =
      t_.AddInferred(Opcode::kConditional, {pred, a, s},
                     {{"true_computation", branches_[0]}, {"false_computation", branches_[1]}});
  EXPECT_THAT(t_.Verify(*operand), Invalid("branch 1 computation 'copy' parameter 0"));
  Computation* other = t_.BinaryComputation("scalar", Opcode::kAdd, PrimitiveType::kF32);
  (void)other;
  Computation* to_s32 = t_.NewComputation("to_s32");
  t_.Add(Opcode::kConvert, {t_.Param(F32({2}), to_s32)}, {}, S32({2}), to_s32);
  Instruction* results =
      t_.Add(Opcode::kConditional, {pred, a, a},
             {{"true_computation", branches_[0]}, {"false_computation", to_s32}});
  EXPECT_THAT(t_.Infer(*results), Invalid("branch 1 'to_s32' returns s32[2]"));
}

TEST(CustomCallTest, ShardingIsIdentity) {
  OpTestModule t;
  Instruction* a = t.Param(F32({4}));
  Instruction* cc =
      t.AddInferred(Opcode::kCustomCall, {a}, {{"custom_call_target", std::string("Sharding")}});
  EXPECT_EQ(cc->shape(), F32({4}));
  EXPECT_OK(t.Verify(*cc));
  Literal x = Values<float>({4}, {1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*cc, {x}));
  EXPECT_EQ(out, x);
  EXPECT_FALSE(GetOpDef(Opcode::kCustomCall).traits.side_effecting);
}

TEST(CustomCallTest, ManualRegionMarkersInAGlobalProgram) {
  OpTestModule t;
  Instruction* full = t.Param(F32({4, 2}));
  Instruction* to_shard =
      t.Add(Opcode::kCustomCall, {full},
            {{"custom_call_target", std::string("SPMDFullToShardShape")}}, F32({2, 2}));
  ASSERT_OK_AND_ASSIGN(Shape shard_shape, t.Infer(*to_shard));
  EXPECT_EQ(shard_shape, F32({2, 2}));
  Literal x = Values<float>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // One partition: the tile at offset 0.
  ASSERT_OK_AND_ASSIGN(Literal shard, t.Eval(*to_shard, {x}));
  EXPECT_THAT(ToVector<float>(shard), ElementsAre(1, 2, 3, 4));

  Instruction* piece = t.Param(F32({2, 2}));
  Instruction* to_full =
      t.Add(Opcode::kCustomCall, {piece},
            {{"custom_call_target", std::string("SPMDShardToFullShape")}}, F32({4, 2}));
  EXPECT_OK(t.Verify(*to_full));
  ASSERT_OK_AND_ASSIGN(Literal padded, t.Eval(*to_full, {shard}));
  EXPECT_THAT(ToVector<float>(padded), ElementsAre(1, 2, 3, 4, 0, 0, 0, 0));

  FakeEvalContext two_devices(0, 2);
  EXPECT_THAT(t.Eval(*to_full, {shard}, &two_devices),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("SPMDShardToFullShape")));

  Instruction* grows =
      t.Add(Opcode::kCustomCall, {full},
            {{"custom_call_target", std::string("SPMDFullToShardShape")}}, F32({8, 2}));
  EXPECT_THAT(t.Infer(*grows), Invalid("shard dim 0 (8) exceeds the full dim (4)"));
  Instruction* retype =
      t.Add(Opcode::kCustomCall, {full},
            {{"custom_call_target", std::string("SPMDFullToShardShape")}}, S32({2, 2}));
  EXPECT_THAT(t.Infer(*retype), Invalid("must keep the element type and rank"));
}

TEST(CustomCallTest, OtherTargetsUseDeclaredShapeAndDoNotEvaluate) {
  OpTestModule t;
  Instruction* a = t.Param(F32({4}));
  Instruction* cc = t.Add(Opcode::kCustomCall, {a, a},
                          {{"custom_call_target", std::string("my_kernel")},
                           {"custom_call_has_side_effect", true},
                           {"api_version", std::string("API_VERSION_TYPED_FFI")},
                           {"backend_config", std::string("{}")}},
                          Shape::Tuple({F32({2}), S32({})}));
  ASSERT_OK_AND_ASSIGN(Shape shape, t.Infer(*cc));
  EXPECT_EQ(shape, Shape::Tuple({F32({2}), S32({})}));
  EXPECT_OK(t.Verify(*cc));
  Literal x(F32({4}));
  EXPECT_THAT(t.Eval(*cc, {x, x}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("\"my_kernel\"")));

  Instruction* undeclared =
      t.Add(Opcode::kCustomCall, {a}, {{"custom_call_target", std::string("my_kernel")}});
  EXPECT_THAT(t.Infer(*undeclared), Invalid("needs a declared result shape"));
  Instruction* api = t.Add(Opcode::kCustomCall, {a},
                           {{"custom_call_target", std::string("Sharding")},
                            {"api_version", std::string("API_VERSION_NEWEST")}});
  EXPECT_THAT(t.Verify(*api), Invalid("api_version must be one of"));
  Instruction* two =
      t.Add(Opcode::kCustomCall, {a, a}, {{"custom_call_target", std::string("Sharding")}});
  EXPECT_THAT(t.Infer(*two), Invalid("expects 1 operand, got 2"));
}

// Through the parser, verifier and interpreter: a counting loop feeding both
// conditional forms and a call.
TEST(ControlFlowTextTest, ParsedModuleEvaluates) {
  constexpr char kText[] = R"(
HloModule control_flow

%cond (s: (s32[], f32[])) -> pred[] {
  %s = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(10)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], f32[])) -> (s32[], f32[]) {
  %s = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %x = f32[] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %half = f32[] constant(0.5)
  %i2 = s32[] add(%i, %one)
  %x2 = f32[] add(%x, %half)
  ROOT %t = (s32[], f32[]) tuple(%i2, %x2)
}

%neg (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %n = f32[] negate(%a)
}

%same (a: f32[]) -> f32[] {
  ROOT %a = f32[] parameter(0)
}

%twice (a: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %d = f32[] add(%a, %a)
}

ENTRY %main (x: f32[], k: s32[]) -> (s32[], f32[], f32[], f32[]) {
  %x = f32[] parameter(0)
  %k = s32[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[]) tuple(%zero, %x)
  %loop = (s32[], f32[]) while(%init), condition=%cond, body=%body
  %count = s32[] get-tuple-element(%loop), index=0
  %sum = f32[] get-tuple-element(%loop), index=1
  %is_ten = pred[] compare(%count, %count), direction=EQ
  %c1 = f32[] conditional(%is_ten, %sum, %sum), true_computation=%neg, false_computation=%same
  %c2 = f32[] conditional(%k, %sum, %sum, %sum), branch_computations={%neg, %same, %twice}
  %c3 = f32[] call(%sum), to_apply=%twice
  ROOT %t = (s32[], f32[], f32[], f32[]) tuple(%count, %c1, %c2, %c3)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseAndVerifyModule(kText));
  for (int32_t k : {0, 1, 2, 9}) {
    std::vector<Literal> args;
    args.push_back(Literal::Scalar<float>(1));
    args.push_back(Literal::Scalar<int32_t>(k));
    ASSERT_OK_AND_ASSIGN(Literal out, Evaluate(*module, args));
    EXPECT_EQ(out.element(0).data<int32_t>()[0], 10);
    EXPECT_EQ(out.element(1).data<float>()[0], -6);
    float expected = k == 0 ? -6 : k == 1 ? 6 : 12;
    EXPECT_EQ(out.element(2).data<float>()[0], expected) << "k=" << k;
    EXPECT_EQ(out.element(3).data<float>()[0], 12);
  }
}

}  // namespace
}  // namespace sharc::hlo
