// dot: dimension numbers, result layout (batch, lhs free, rhs free), mixed
// precision and accumulation, and error messages.
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/hlo/ops_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::ops_test::F32;
using ::sharc::hlo::ops_test::OpTestModule;
using ::sharc::hlo::ops_test::S32;
using ::sharc::hlo::ops_test::ToVector;
using ::sharc::hlo::ops_test::Values;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<Attribute> DotAttrs(IntList lb, IntList lc, IntList rb, IntList rc) {
  return {{"lhs_batch_dims", lb},
          {"lhs_contracting_dims", lc},
          {"rhs_batch_dims", rb},
          {"rhs_contracting_dims", rc}};
}

TEST(DotTest, Matmul) {
  OpTestModule t;
  Instruction* a = t.Param(F32({2, 3}));
  Instruction* b = t.Param(F32({3, 2}));
  Instruction* d = t.AddInferred(Opcode::kDot, {a, b}, DotAttrs({}, {1}, {}, {0}));
  EXPECT_EQ(d->shape(), F32({2, 2}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*d, {Values<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                                Values<float>({3, 2}, {7, 8, 9, 10, 11, 12})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(58, 64, 139, 154));
}

TEST(DotTest, BatchDimsComeFirst) {
  // lhs [k=2, b=2, m=1], rhs [b=2, n=2, k=2] -> [b, m, n].
  OpTestModule t;
  Instruction* a = t.Param(F32({2, 2, 1}));
  Instruction* b = t.Param(F32({2, 2, 2}));
  Instruction* d = t.AddInferred(Opcode::kDot, {a, b}, DotAttrs({1}, {0}, {0}, {2}));
  EXPECT_EQ(d->shape(), F32({2, 1, 2}));
  // lhs[k][b][0]: b=0 -> (1, 2) over k; b=1 -> (3, 4).
  Literal lhs = Values<float>({2, 2, 1}, {1, 3, 2, 4});
  // rhs[b][n][k]
  Literal rhs = Values<float>({2, 2, 2}, {1, 1, 1, 0, 0, 1, 2, 2});
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*d, {lhs, rhs}));
  // b=0: n=0 -> 1+2=3, n=1 -> 1. b=1: n=0 -> 4, n=1 -> 6+8=14.
  EXPECT_THAT(ToVector<float>(out), ElementsAre(3, 1, 4, 14));
}

TEST(DotTest, FreeDimsKeepOperandOrder) {
  OpTestModule t;
  Instruction* a = t.Param(F32({2, 3, 4}));
  Instruction* b = t.Param(F32({5, 3}));
  Instruction* d = t.AddInferred(Opcode::kDot, {a, b}, DotAttrs({}, {1}, {}, {1}));
  EXPECT_EQ(d->shape(), F32({2, 4, 5}));
  Instruction* outer =
      t.AddInferred(Opcode::kDot, {t.Param(F32({2})), t.Param(F32({3}))}, DotAttrs({}, {}, {}, {}));
  EXPECT_EQ(outer->shape(), F32({2, 3}));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*outer, {Values<float>({2}, {1, 2}), Values<float>({3}, {3, 4, 5})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(3, 4, 5, 6, 8, 10));
}

TEST(DotTest, MixedPrecisionUsesDeclaredType) {
  OpTestModule t;
  Instruction* a = t.Param(Shape(PrimitiveType::kBF16, {2}));
  Instruction* b = t.Param(Shape(PrimitiveType::kBF16, {2}));
  Instruction* d = t.Add(Opcode::kDot, {a, b}, DotAttrs({}, {0}, {}, {0}), F32({}));
  ASSERT_OK_AND_ASSIGN(Shape shape, t.Infer(*d));
  EXPECT_EQ(shape, F32({}));
  Literal x(Shape(PrimitiveType::kBF16, {2}));
  x.data<BFloat16>()[0] = BFloat16(1.5f);
  x.data<BFloat16>()[1] = BFloat16(2.0f);
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*d, {x, x}));
  EXPECT_EQ(out.shape(), F32({}));
  EXPECT_EQ(out.data<float>()[0], 6.25f);

  Instruction* i8a = t.Param(Shape(PrimitiveType::kS8, {2}));
  Instruction* i8b = t.Param(Shape(PrimitiveType::kS8, {2}));
  Instruction* di = t.Add(Opcode::kDot, {i8a, i8b}, DotAttrs({}, {0}, {}, {0}), S32({}));
  EXPECT_OK(t.Infer(*di).status());
  ASSERT_OK_AND_ASSIGN(Literal iout, t.Eval(*di, {Values<int8_t>({2}, {100, 100}),
                                                  Values<int8_t>({2}, {100, 100})}));
  EXPECT_EQ(iout.data<int32_t>()[0], 20000);
}

TEST(DotTest, AccumulatesInDoubleAndIntegersWrap) {
  OpTestModule t;
  Instruction* a = t.Param(F32({3}));
  Instruction* b = t.Param(F32({3}));
  Instruction* d = t.AddInferred(Opcode::kDot, {a, b}, DotAttrs({}, {0}, {}, {0}));
  // In f32, 1e8 + 1 == 1e8; a double accumulator keeps the 1.
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*d, {Values<float>({3}, {1e8f, 1, -1e8f}),
                                                Values<float>({3}, {1, 1, 1})}));
  EXPECT_EQ(out.data<float>()[0], 1.0f);

  Instruction* ia = t.Param(S32({2}));
  Instruction* ib = t.Param(S32({2}));
  Instruction* di = t.AddInferred(Opcode::kDot, {ia, ib}, DotAttrs({}, {0}, {}, {0}));
  ASSERT_OK_AND_ASSIGN(Literal iout, t.Eval(*di, {Values<int32_t>({2}, {65536, 65536}),
                                                  Values<int32_t>({2}, {65536, 1})}));
  // 2^32 wraps to 0, plus 65536.
  EXPECT_EQ(iout.data<int32_t>()[0], 65536);
}

TEST(DotTest, RejectsBadDimensionNumbers) {
  OpTestModule t;
  Instruction* a = t.Param(F32({8, 64}));
  Instruction* b = t.Param(F32({32, 4}));
  auto infer = [&](Instruction* l, Instruction* r, std::vector<Attribute> attrs) {
    return t.Infer(*t.Add(Opcode::kDot, {l, r}, std::move(attrs)));
  };
  EXPECT_THAT(infer(a, b, DotAttrs({}, {1}, {}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("contracting dim 1 has size 64 on lhs but 32 on rhs")));
  EXPECT_THAT(infer(a, b, DotAttrs({}, {1}, {}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("1 lhs contracting dims but 0 rhs contracting dims")));
  EXPECT_THAT(infer(a, b, DotAttrs({0}, {}, {}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("batch dims")));
  EXPECT_THAT(infer(a, b, DotAttrs({}, {2}, {}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(infer(a, b, DotAttrs({}, {-1}, {}, {0})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(infer(a, b, DotAttrs({0}, {0}, {0}, {1})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("appears twice")));
  EXPECT_THAT(infer(a, b, DotAttrs({0}, {}, {0}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("batch dim 0 has size 8 on lhs but 32 on rhs")));
  Instruction* tuple = t.Add(Opcode::kTuple, {a}, {}, Shape::Tuple({F32({8, 64})}));
  EXPECT_THAT(infer(tuple, b, DotAttrs({}, {}, {}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be an array")));
  // A contraction producing too many elements is refused, not allocated.
  Instruction* big = t.Param(F32({1 << 20, 1 << 20}));
  EXPECT_THAT(infer(big, big, DotAttrs({}, {}, {}, {})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("too many elements")));
}

// Random dimension numbers are either rejected or evaluate cleanly.
TEST(DotFuzzTest, RandomDimensionNumbersNeverCrash) {
  std::mt19937 rng(99);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto dims_list = [&](int64_t rank) {
    IntList l;
    for (int64_t n = pick(0, 2); n > 0; --n) l.push_back(pick(-1, rank));
    return l;
  };
  int evaluated = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    OpTestModule t;
    std::vector<int64_t> ld, rd;
    for (int64_t n = pick(0, 3); n > 0; --n) ld.push_back(pick(0, 2));
    for (int64_t n = pick(0, 3); n > 0; --n) rd.push_back(pick(0, 2));
    Instruction* a = t.Param(F32(ld));
    Instruction* b = t.Param(F32(rd));
    int64_t lr = static_cast<int64_t>(ld.size()), rr = static_cast<int64_t>(rd.size());
    Instruction* d = t.Add(Opcode::kDot, {a, b},
                           DotAttrs(dims_list(lr), dims_list(lr), dims_list(rr), dims_list(rr)));
    absl::StatusOr<Shape> shape = t.Infer(*d);
    if (!shape.ok()) continue;
    d->set_shape(*shape);
    ++evaluated;
    EXPECT_OK(t.Eval(*d, {Literal(F32(ld)), Literal(F32(rd))}).status()) << d->ToString();
  }
  EXPECT_GT(evaluated, 150);
}

}  // namespace
}  // namespace sharc::hlo
