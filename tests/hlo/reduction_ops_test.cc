// reduce and reduce-window: shape inference, verification and reference
// evaluation (fast path and reducer-call path).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

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

constexpr PrimitiveType kF32 = PrimitiveType::kF32;
constexpr PrimitiveType kS32 = PrimitiveType::kS32;

// {size, stride, pad_lo, pad_hi, base_dilation, window_dilation}
std::vector<int64_t> Win(int64_t size, int64_t stride = 1, int64_t lo = 0, int64_t hi = 0,
                         int64_t base = 1, int64_t dil = 1) {
  return {size, stride, lo, hi, base, dil};
}

TEST(ReduceTest, SumsOverOneDimension) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({2, 3}));
  Instruction* init = t.Param(F32({}));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {x, init}, {{"dimensions", IntList{1}}, {"to_apply", add}});
  EXPECT_EQ(r->shape(), F32({2}));
  EXPECT_OK(t.Verify(*r));
  FakeEvalContext ctx;
  ASSERT_OK_AND_ASSIGN(
      Literal out,
      t.Eval(*r, {Values<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Literal::Scalar<float>(10)}, &ctx));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(16, 25));
  EXPECT_EQ(ctx.calls, 0) << "add reducer should take the fast path";
}

TEST(ReduceTest, ReducesAllDimensionsToScalar) {
  OpTestModule t;
  Computation* mx = t.BinaryComputation("max", Opcode::kMaximum, kS32);
  Instruction* x = t.Param(S32({2, 2}));
  Instruction* init = t.Param(S32({}));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {x, init}, {{"dimensions", IntList{0, 1}}, {"to_apply", mx}});
  EXPECT_EQ(r->shape(), S32({}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*r, {Values<int32_t>({2, 2}, {3, -1, 7, 2}),
                                                Literal::Scalar<int32_t>(-100)}));
  EXPECT_EQ(out.data<int32_t>()[0], 7);
}

TEST(ReduceTest, ReducerCallPathKeepsRowMajorOrder) {
  // subtract is not a fast-path op and is order sensitive:
  // ((init - a) - b) - c per output element, reduced dims in row-major order.
  OpTestModule t;
  Computation* sub = t.BinaryComputation("sub", Opcode::kSubtract, kF32);
  Instruction* x = t.Param(F32({2, 2, 2}));
  Instruction* init = t.Param(F32({}));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {x, init}, {{"dimensions", IntList{0, 2}}, {"to_apply", sub}});
  EXPECT_EQ(r->shape(), F32({2}));
  FakeEvalContext ctx;
  // x[i][j][k] = 1 + 4i + 2j + k. Output j=0 folds x000,x001,x100,x101 = 1,2,5,6.
  ASSERT_OK_AND_ASSIGN(
      Literal out,
      t.Eval(*r, {Values<float>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Literal::Scalar<float>(100)},
             &ctx));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(100 - 1 - 2 - 5 - 6, 100 - 3 - 4 - 7 - 8));
  EXPECT_EQ(ctx.calls, 8);
}

// Variadic reduce computing (max value, its index) per row, as jnp.argmax does.
TEST(ReduceTest, VariadicArgmax) {
  OpTestModule t;
  Computation* argmax = t.NewComputation("argmax");
  Instruction* acc_v = t.Param(F32({}), argmax);
  Instruction* acc_i = t.Param(S32({}), argmax);
  Instruction* x_v = t.Param(F32({}), argmax);
  Instruction* x_i = t.Param(S32({}), argmax);
  Instruction* gt = t.Add(Opcode::kCompare, {x_v, acc_v}, {{"direction", std::string("GT")}},
                          Shape::Scalar(PrimitiveType::kPred), argmax);
  Instruction* v = t.Add(Opcode::kSelect, {gt, x_v, acc_v}, {}, F32({}), argmax);
  Instruction* i = t.Add(Opcode::kSelect, {gt, x_i, acc_i}, {}, S32({}), argmax);
  t.Add(Opcode::kTuple, {v, i}, {}, Shape::Tuple({F32({}), S32({})}), argmax);

  Instruction* vals = t.Param(F32({2, 3}));
  Instruction* idx = t.Param(S32({2, 3}));
  Instruction* init_v = t.Param(F32({}));
  Instruction* init_i = t.Param(S32({}));
  Instruction* r = t.AddInferred(Opcode::kReduce, {vals, idx, init_v, init_i},
                                 {{"dimensions", IntList{1}}, {"to_apply", argmax}});
  EXPECT_EQ(r->shape(), Shape::Tuple({F32({2}), S32({2})}));
  EXPECT_OK(t.Verify(*r));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*r, {Values<float>({2, 3}, {1, 9, 3, 8, 2, 8}),
                                   Values<int32_t>({2, 3}, {0, 1, 2, 0, 1, 2}),
                                   Literal::Scalar<float>(-std::numeric_limits<float>::infinity()),
                                   Literal::Scalar<int32_t>(-1)}));
  ASSERT_TRUE(out.is_tuple());
  EXPECT_THAT(ToVector<float>(out.element(0)), ElementsAre(9, 8));
  // Ties keep the first index (strict GT).
  EXPECT_THAT(ToVector<int32_t>(out.element(1)), ElementsAre(1, 0));
}

TEST(ReduceTest, MillionElementsTakeFastPath) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({1000, 1000}));
  Instruction* init = t.Param(F32({}));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {x, init}, {{"dimensions", IntList{0, 1}}, {"to_apply", add}});
  Literal ones(F32({1000, 1000}));
  for (float& v : ones.data<float>()) v = 1.0f;
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*r, {ones, Literal::Scalar<float>(0)}));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(out.data<float>()[0], 1e6f);
  EXPECT_LT(seconds, 0.5);
}

TEST(ReduceTest, IntegerSumWraps) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kS8);
  Instruction* x = t.Param(Shape(PrimitiveType::kS8, {3}));
  Instruction* init = t.Param(Shape::Scalar(PrimitiveType::kS8));
  Instruction* r =
      t.AddInferred(Opcode::kReduce, {x, init}, {{"dimensions", IntList{0}}, {"to_apply", add}});
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*r, {Values<int8_t>({3}, {100, 100, 100}), Literal::Scalar<int8_t>(0)}));
  EXPECT_EQ(out.data<int8_t>()[0], static_cast<int8_t>(300 - 256));
}

TEST(ReduceTest, RejectsBadAttributesAndOperands) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Computation* add_s32 = t.BinaryComputation("add_s32", Opcode::kAdd, kS32);
  Instruction* x = t.Param(F32({2, 3}));
  Instruction* init = t.Param(F32({}));
  Instruction* init_s32 = t.Param(S32({}));

  Instruction* bad_dim =
      t.Add(Opcode::kReduce, {x, init}, {{"dimensions", IntList{2}}, {"to_apply", add}});
  EXPECT_THAT(t.Infer(*bad_dim),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  Instruction* twice =
      t.Add(Opcode::kReduce, {x, init}, {{"dimensions", IntList{1, 1}}, {"to_apply", add}});
  EXPECT_THAT(t.Infer(*twice),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("appears twice")));
  Instruction* huge = t.Add(Opcode::kReduce, {x, init},
                            {{"dimensions", IntList{int64_t{1} << 62}}, {"to_apply", add}});
  EXPECT_THAT(t.Infer(*huge), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("range")));
  Instruction* odd =
      t.Add(Opcode::kReduce, {x, init, init}, {{"dimensions", IntList{1}}, {"to_apply", add}});
  EXPECT_THAT(t.Infer(*odd),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("N init values")));
  Instruction* type =
      t.Add(Opcode::kReduce, {x, init_s32}, {{"dimensions", IntList{1}}, {"to_apply", add}});
  EXPECT_THAT(t.Infer(*type),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("init value 0 must be")));
  Instruction* reducer =
      t.Add(Opcode::kReduce, {x, init}, {{"dimensions", IntList{1}}, {"to_apply", add_s32}});
  EXPECT_OK(t.Infer(*reducer).status());
  EXPECT_THAT(t.Verify(*reducer),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parameter 0 is s32[]")));
  // Evaluating an unverified instruction reports the problem instead of crashing.
  EXPECT_THAT(t.Eval(*reducer, {Literal(F32({2, 3})), Literal::Scalar<float>(0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("to_apply")));
  Instruction* missing = t.Add(Opcode::kReduce, {x, init}, {{"dimensions", IntList{1}}});
  EXPECT_THAT(t.Verify(*missing),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("missing its to_apply")));
}

TEST(ReduceWindowTest, PaddingAndStride) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({5}));
  Instruction* init = t.Param(F32({}));
  Instruction* r = t.AddInferred(Opcode::kReduceWindow, {x, init},
                                 {{"window", IntListList{Win(3, 2, 1, 1)}}, {"to_apply", add}});
  EXPECT_EQ(r->shape(), F32({3}));
  EXPECT_OK(t.Verify(*r));
  // Padded positions -1..5; windows [-1,1], [1,3], [3,5]: padding is skipped.
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*r, {Values<float>({5}, {1, 2, 3, 4, 5}), Literal::Scalar<float>(0)}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(3, 9, 9));
}

TEST(ReduceWindowTest, PaddingDoesNotContributeToMax) {
  OpTestModule t;
  Computation* mx = t.BinaryComputation("max", Opcode::kMaximum, kF32);
  Instruction* x = t.Param(F32({3}));
  Instruction* init = t.Param(F32({}));
  Instruction* r = t.AddInferred(Opcode::kReduceWindow, {x, init},
                                 {{"window", IntListList{Win(2, 1, 1, 1)}}, {"to_apply", mx}});
  EXPECT_EQ(r->shape(), F32({4}));
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*r, {Values<float>({3}, {-5, -7, -1}), Literal::Scalar<float>(-100)}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(-5, -5, -1, -1));
}

TEST(ReduceWindowTest, TwoDimensionalWindow) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({3, 3}));
  Instruction* init = t.Param(F32({}));
  Instruction* r = t.AddInferred(Opcode::kReduceWindow, {x, init},
                                 {{"window", IntListList{Win(2), Win(2)}}, {"to_apply", add}});
  EXPECT_EQ(r->shape(), F32({2, 2}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*r, {Values<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                                Literal::Scalar<float>(0)}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(12, 16, 24, 28));
}

TEST(ReduceWindowTest, BaseAndWindowDilation) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({3}));
  Instruction* init = t.Param(F32({}));
  // Base dilation 2: [1, _, 2, _, 3]; holes are skipped.
  Instruction* r =
      t.AddInferred(Opcode::kReduceWindow, {x, init},
                    {{"window", IntListList{Win(2, 1, 0, 0, 2, 1)}}, {"to_apply", add}});
  EXPECT_EQ(r->shape(), F32({4}));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*r, {Values<float>({3}, {1, 2, 3}), Literal::Scalar<float>(0)}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(1, 2, 2, 3));

  Instruction* y = t.Param(F32({4}));
  // Window dilation 2: elements i and i+2.
  Instruction* r2 =
      t.AddInferred(Opcode::kReduceWindow, {y, init},
                    {{"window", IntListList{Win(2, 1, 0, 0, 1, 2)}}, {"to_apply", add}});
  EXPECT_EQ(r2->shape(), F32({2}));
  ASSERT_OK_AND_ASSIGN(Literal out2,
                       t.Eval(*r2, {Values<float>({4}, {1, 2, 3, 4}), Literal::Scalar<float>(0)}));
  EXPECT_THAT(ToVector<float>(out2), ElementsAre(4, 6));
}

TEST(ReduceWindowTest, VariadicUsesReducerCalls) {
  // Window max together with the sum of the matching second input, through
  // a tuple-returning reducer.
  OpTestModule t;
  Computation* both = t.NewComputation("both");
  Instruction* a0 = t.Param(F32({}), both);
  Instruction* a1 = t.Param(S32({}), both);
  Instruction* x0 = t.Param(F32({}), both);
  Instruction* x1 = t.Param(S32({}), both);
  Instruction* m = t.Add(Opcode::kMaximum, {a0, x0}, {}, F32({}), both);
  Instruction* s = t.Add(Opcode::kAdd, {a1, x1}, {}, S32({}), both);
  t.Add(Opcode::kTuple, {m, s}, {}, Shape::Tuple({F32({}), S32({})}), both);
  Instruction* x = t.Param(F32({4}));
  Instruction* y = t.Param(S32({4}));
  Instruction* ix = t.Param(F32({}));
  Instruction* iy = t.Param(S32({}));
  Instruction* r = t.AddInferred(Opcode::kReduceWindow, {x, y, ix, iy},
                                 {{"window", IntListList{Win(2, 2)}}, {"to_apply", both}});
  EXPECT_EQ(r->shape(), Shape::Tuple({F32({2}), S32({2})}));
  EXPECT_OK(t.Verify(*r));
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*r, {Values<float>({4}, {1, 5, 2, 0}), Values<int32_t>({4}, {1, 2, 3, 4}),
                               Literal::Scalar<float>(-1), Literal::Scalar<int32_t>(0)}));
  EXPECT_THAT(ToVector<float>(out.element(0)), ElementsAre(5, 2));
  EXPECT_THAT(ToVector<int32_t>(out.element(1)), ElementsAre(3, 7));
}

TEST(ReduceWindowTest, RejectsBadWindows) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
  Instruction* x = t.Param(F32({4, 4}));
  Instruction* init = t.Param(F32({}));
  auto infer = [&](IntListList window) {
    Instruction* r =
        t.Add(Opcode::kReduceWindow, {x, init}, {{"window", std::move(window)}, {"to_apply", add}});
    return t.Infer(*r).status();
  };
  EXPECT_THAT(infer({Win(2)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("window has 1 dimensions but the inputs have rank 2")));
  EXPECT_THAT(infer({Win(2), Win(2, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("stride 0")));
  EXPECT_THAT(infer({Win(0), Win(2)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size 0")));
  EXPECT_THAT(infer({Win(2), {1, 2, 3}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected 6")));
  EXPECT_THAT(infer({Win(2), Win(1, 1, 0, 0, int64_t{1} << 62)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out-of-range")));
  EXPECT_THAT(infer({Win(2), Win(1, 1, -10, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("padded input size")));
  EXPECT_THAT(infer({Win(2), Win(1, 1, 0, 0, 1, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dilation")));
  // A window larger than the padded input gives an empty result.
  Instruction* big = t.AddInferred(Opcode::kReduceWindow, {x, init},
                                   {{"window", IntListList{Win(5), Win(1)}}, {"to_apply", add}});
  EXPECT_EQ(big->shape(), F32({0, 4}));
}

// Random windows are either rejected or evaluate cleanly.
TEST(ReduceWindowFuzzTest, RandomWindowsNeverCrash) {
  std::mt19937 rng(5);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int evaluated = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    OpTestModule t;
    Computation* add = t.BinaryComputation("add", Opcode::kAdd, kF32);
    std::vector<int64_t> dims;
    for (int64_t n = pick(0, 3); n > 0; --n) dims.push_back(pick(0, 4));
    IntListList window;
    for (int64_t n = static_cast<int64_t>(dims.size()) + (pick(0, 9) == 0 ? 1 : 0); n > 0; --n) {
      window.push_back({pick(0, 3), pick(0, 3), pick(-3, 3), pick(-3, 3), pick(0, 3), pick(0, 3)});
    }
    Instruction* x = t.Param(F32(dims));
    Instruction* init = t.Param(F32({}));
    Instruction* r = t.Add(Opcode::kReduceWindow, {x, init},
                           {{"window", window}, {"to_apply", add}});
    absl::StatusOr<Shape> shape = t.Infer(*r);
    if (!shape.ok()) continue;
    r->set_shape(*shape);
    ++evaluated;
    EXPECT_OK(t.Eval(*r, {Literal(F32(dims)), Literal::Scalar<float>(0)}).status())
        << r->ToString();
  }
  EXPECT_GT(evaluated, 100);
}

}  // namespace
}  // namespace sharc::hlo
