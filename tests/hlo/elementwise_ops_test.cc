// Elementwise op definitions: shape inference, type rules and the reference
// evaluator against hand-computed values (XLA's integer and NaN semantics,
// f16/bf16 rounding, convert saturation).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/ops/op_def.h"
#include "tests/hlo/op_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::testing::Lit;
using ::sharc::hlo::testing::OpHarness;
using ::sharc::hlo::testing::Preds;
using ::sharc::hlo::testing::Values;
using ::sharc::hlo::testing::Vec;
using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType F64 = PrimitiveType::kF64;
constexpr PrimitiveType F16 = PrimitiveType::kF16;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;
constexpr PrimitiveType S8 = PrimitiveType::kS8;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType S64 = PrimitiveType::kS64;
constexpr PrimitiveType U8 = PrimitiveType::kU8;
constexpr PrimitiveType U16 = PrimitiveType::kU16;
constexpr PrimitiveType U32 = PrimitiveType::kU32;
constexpr PrimitiveType U64 = PrimitiveType::kU64;
constexpr PrimitiveType PRED = PrimitiveType::kPred;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

class ElementwiseOpsTest : public ::testing::Test {
 protected:
  // Evaluates a binary op on two vectors of the same type.
  template <typename T>
  std::vector<T> Binary(Opcode op, std::vector<T> a, std::vector<T> b) {
    Shape shape(PrimitiveTypeOf<T>(), {static_cast<int64_t>(a.size())});
    absl::StatusOr<Literal> r = h_.Run(op, shape, {Vec<T>(a), Vec<T>(b)});
    EXPECT_THAT(r, IsOk());
    return r.ok() ? Values<T>(*r) : std::vector<T>();
  }
  template <typename T>
  std::vector<T> Unary(Opcode op, std::vector<T> a) {
    Shape shape(PrimitiveTypeOf<T>(), {static_cast<int64_t>(a.size())});
    absl::StatusOr<Literal> r = h_.Run(op, shape, {Vec<T>(a)});
    EXPECT_THAT(r, IsOk());
    return r.ok() ? Values<T>(*r) : std::vector<T>();
  }
  template <typename To, typename From>
  std::vector<To> Convert(std::vector<From> a) {
    Shape shape(PrimitiveTypeOf<To>(), {static_cast<int64_t>(a.size())});
    absl::StatusOr<Literal> r = h_.Run(Opcode::kConvert, shape, {Vec<From>(a)});
    EXPECT_THAT(r, IsOk());
    return r.ok() ? Values<To>(*r) : std::vector<To>();
  }
  std::vector<bool> Compare(const Literal& a, const Literal& b, std::string direction,
                            std::string type = "") {
    std::vector<testing::NamedAttr> attrs = {{"direction", direction}};
    if (!type.empty()) attrs.push_back({"type", type});
    Shape shape(PRED, a.shape().dims());
    absl::StatusOr<Literal> r = h_.Run(Opcode::kCompare, shape, {a, b}, attrs);
    EXPECT_THAT(r, IsOk());
    return r.ok() ? Values<bool>(*r) : std::vector<bool>();
  }

  OpHarness h_;
};

TEST_F(ElementwiseOpsTest, AddFloatAndWrappingIntegers) {
  EXPECT_THAT(Binary<float>(Opcode::kAdd, {1.5f, -2}, {2, 0.25f}), ElementsAre(3.5f, -1.75f));
  EXPECT_THAT(Binary<int8_t>(Opcode::kAdd, {127, -128}, {1, -1}), ElementsAre(-128, 127));
  EXPECT_THAT(Binary<uint8_t>(Opcode::kAdd, {200}, {100}), ElementsAre(44));
  EXPECT_THAT(Binary<int64_t>(Opcode::kAdd, {std::numeric_limits<int64_t>::max()}, {1}),
              ElementsAre(std::numeric_limits<int64_t>::min()));
}

TEST_F(ElementwiseOpsTest, SubtractAndMultiplyWrap) {
  EXPECT_THAT(Binary<int32_t>(Opcode::kSubtract, {kMin32, 5}, {1, 7}), ElementsAre(kMax32, -2));
  EXPECT_THAT(Binary<int32_t>(Opcode::kMultiply, {kMax32, -3}, {2, 4}), ElementsAre(-2, -12));
  // u16 * u16 would overflow a promoted int; it must wrap modulo 2^16.
  EXPECT_THAT(Binary<uint16_t>(Opcode::kMultiply, {65535}, {65535}), ElementsAre(1));
  EXPECT_THAT(Binary<uint32_t>(Opcode::kSubtract, {0}, {1}), ElementsAre(0xffffffffu));
}

TEST_F(ElementwiseOpsTest, IntegerDivisionEdgeCases) {
  EXPECT_THAT(Binary<int32_t>(Opcode::kDivide, {7, -7, 5, kMin32, 0}, {2, 2, 0, -1, 0}),
              ElementsAre(3, -3, -1, kMin32, -1));
  EXPECT_THAT(Binary<uint32_t>(Opcode::kDivide, {5, 9}, {0, 2}), ElementsAre(0xffffffffu, 4u));
  EXPECT_THAT(Binary<int8_t>(Opcode::kDivide, {-128}, {-1}), ElementsAre(-128));
}

TEST_F(ElementwiseOpsTest, RemainderEdgeCases) {
  EXPECT_THAT(Binary<int32_t>(Opcode::kRemainder, {7, -7, 5, kMin32}, {3, 3, 0, -1}),
              ElementsAre(1, -1, 5, 0));
  EXPECT_THAT(Binary<uint8_t>(Opcode::kRemainder, {7, 9}, {0, 4}), ElementsAre(7, 1));
  EXPECT_THAT(Binary<float>(Opcode::kRemainder, {5.5f, -5.5f}, {2, 2}), ElementsAre(1.5f, -1.5f));
  std::vector<float> r = Binary<float>(Opcode::kRemainder, {1}, {0});
  EXPECT_TRUE(std::isnan(r[0]));
}

TEST_F(ElementwiseOpsTest, FloatDivision) {
  std::vector<float> r = Binary<float>(Opcode::kDivide, {1, -1, 0, 6}, {0, 0, 0, 4});
  EXPECT_EQ(r[0], kInf);
  EXPECT_EQ(r[1], -kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], 1.5f);
}

TEST_F(ElementwiseOpsTest, MaximumAndMinimumPropagateNaN) {
  std::vector<float> mx = Binary<float>(Opcode::kMaximum, {kNaN, 1, 2}, {1, kNaN, 3});
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 3);
  std::vector<float> mn = Binary<float>(Opcode::kMinimum, {kNaN, 1, 2}, {1, kNaN, 3});
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_TRUE(std::isnan(mn[1]));
  EXPECT_EQ(mn[2], 2);
  EXPECT_THAT(Binary<int32_t>(Opcode::kMaximum, {-1, 5}, {3, 2}), ElementsAre(3, 5));
  EXPECT_THAT(Binary<uint8_t>(Opcode::kMinimum, {255, 0}, {3, 2}), ElementsAre(3, 0));
}

TEST_F(ElementwiseOpsTest, HalfPrecisionRoundsAfterEachOp) {
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: rounds to the even 1.
  // 1 + 3 * 2^-11 is a tie between 1 + 2^-10 and 1 + 2^-9: rounds to the latter.
  std::vector<Half> r =
      Binary<Half>(Opcode::kAdd, {Half(1.0f), Half(1.0f)},
                   {Half(std::ldexp(1.0f, -11)), Half(3 * std::ldexp(1.0f, -11))});
  EXPECT_EQ(static_cast<float>(r[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(r[1]), 1.0f + std::ldexp(1.0f, -9));
  // Overflow to infinity: 65504 is the largest f16.
  std::vector<Half> big = Binary<Half>(Opcode::kMultiply, {Half(65504.0f)}, {Half(2.0f)});
  EXPECT_EQ(static_cast<float>(big[0]), kInf);

  // bf16 keeps 8 significant bits: 1 + 2^-8 ties to 1; 1 + 3 * 2^-8 to 1 + 2^-6.
  std::vector<BFloat16> b =
      Binary<BFloat16>(Opcode::kAdd, {BFloat16(1.0f), BFloat16(1.0f)},
                       {BFloat16(std::ldexp(1.0f, -8)), BFloat16(3 * std::ldexp(1.0f, -8))});
  EXPECT_EQ(static_cast<float>(b[0]), 1.0f);
  EXPECT_EQ(static_cast<float>(b[1]), 1.0f + std::ldexp(1.0f, -6));

  std::vector<Half> e = Unary<Half>(Opcode::kExp, {Half(1.0f)});
  EXPECT_EQ(e[0].bits, Half(std::exp(1.0f)).bits);
}

TEST_F(ElementwiseOpsTest, IntegerPower) {
  EXPECT_THAT(Binary<int32_t>(Opcode::kPower, {2, 3, 1, -1, -1, 0, 5, -2}, {10, -1, -5, -3, -2, 0, 0, 3}),
              ElementsAre(1024, 0, 1, -1, 1, 1, 1, -8));
  EXPECT_THAT(Binary<int8_t>(Opcode::kPower, {2, 3}, {7, 5}), ElementsAre(-128, -13));  // 243 wraps
  EXPECT_THAT(Binary<uint32_t>(Opcode::kPower, {2, 3}, {32, 4}), ElementsAre(0u, 81u));
  std::vector<float> f = Binary<float>(Opcode::kPower, {2, 9}, {0.5f, 0.5f});
  EXPECT_FLOAT_EQ(f[0], std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(f[1], 3.0f);
}

TEST_F(ElementwiseOpsTest, Shifts) {
  EXPECT_THAT(Binary<int32_t>(Opcode::kShiftLeft, {1, 1, 1, -1}, {3, 32, -1, 31}),
              ElementsAre(8, 0, 0, kMin32));
  EXPECT_THAT(Binary<int32_t>(Opcode::kShiftRightLogical, {-8, -8, 16}, {1, 32, 2}),
              ElementsAre(0x7ffffffc, 0, 4));
  EXPECT_THAT(Binary<int32_t>(Opcode::kShiftRightArithmetic, {-8, -8, 8, 8}, {1, 40, 40, -1}),
              ElementsAre(-4, -1, 0, 0));
  EXPECT_THAT(Binary<uint8_t>(Opcode::kShiftRightArithmetic, {0x80, 0x80, 0x40}, {1, 8, 9}),
              ElementsAre(0xc0, 0xff, 0x00));
  EXPECT_THAT(Binary<uint8_t>(Opcode::kShiftLeft, {0x81}, {1}), ElementsAre(0x02));
  EXPECT_THAT(Binary<int64_t>(Opcode::kShiftLeft, {1}, {63}),
              ElementsAre(std::numeric_limits<int64_t>::min()));
}

TEST_F(ElementwiseOpsTest, LogicOnPredAndIntegers) {
  Shape p2(PRED, {4});
  ASSERT_OK_AND_ASSIGN(Literal a, h_.Run(Opcode::kAnd, p2,
                                         {Preds({4}, {true, true, false, false}),
                                          Preds({4}, {true, false, true, false})}));
  EXPECT_THAT(Values<bool>(a), ElementsAre(true, false, false, false));
  ASSERT_OK_AND_ASSIGN(Literal o, h_.Run(Opcode::kOr, p2,
                                         {Preds({4}, {true, true, false, false}),
                                          Preds({4}, {true, false, true, false})}));
  EXPECT_THAT(Values<bool>(o), ElementsAre(true, true, true, false));
  ASSERT_OK_AND_ASSIGN(Literal x, h_.Run(Opcode::kXor, p2,
                                         {Preds({4}, {true, true, false, false}),
                                          Preds({4}, {true, false, true, false})}));
  EXPECT_THAT(Values<bool>(x), ElementsAre(false, true, true, false));
  ASSERT_OK_AND_ASSIGN(Literal n, h_.Run(Opcode::kNot, Shape(PRED, {2}), {Preds({2}, {true, false})}));
  EXPECT_THAT(Values<bool>(n), ElementsAre(false, true));

  EXPECT_THAT(Binary<uint8_t>(Opcode::kAnd, {0xf0}, {0x3c}), ElementsAre(0x30));
  EXPECT_THAT(Binary<int32_t>(Opcode::kXor, {-1}, {5}), ElementsAre(-6));
  EXPECT_THAT(Unary<int8_t>(Opcode::kNot, {0, 5}), ElementsAre(-1, -6));
  EXPECT_THAT(Unary<uint16_t>(Opcode::kNot, {0}), ElementsAre(0xffff));
}

TEST_F(ElementwiseOpsTest, FloatUnaryMath) {
  const float x = 0.7f;
  auto one = [&](Opcode op) { return Unary<float>(op, {x})[0]; };
  EXPECT_FLOAT_EQ(one(Opcode::kExp), std::exp(x));
  EXPECT_FLOAT_EQ(one(Opcode::kExpm1), std::expm1(x));
  EXPECT_FLOAT_EQ(one(Opcode::kLog), std::log(x));
  EXPECT_FLOAT_EQ(one(Opcode::kLog1p), std::log1p(x));
  EXPECT_FLOAT_EQ(one(Opcode::kSin), std::sin(x));
  EXPECT_FLOAT_EQ(one(Opcode::kCos), std::cos(x));
  EXPECT_FLOAT_EQ(one(Opcode::kTan), std::tan(x));
  EXPECT_FLOAT_EQ(one(Opcode::kTanh), std::tanh(x));
  EXPECT_FLOAT_EQ(one(Opcode::kSqrt), std::sqrt(x));
  EXPECT_FLOAT_EQ(one(Opcode::kCbrt), std::cbrt(x));
  EXPECT_FLOAT_EQ(one(Opcode::kRsqrt), 1 / std::sqrt(x));
  EXPECT_FLOAT_EQ(one(Opcode::kLogistic), 1 / (1 + std::exp(-x)));
  EXPECT_THAT(Unary<float>(Opcode::kLogistic, {0, -1000, 1000}), ElementsAre(0.5f, 0.0f, 1.0f));
  EXPECT_THAT(Unary<double>(Opcode::kRsqrt, {4.0}), ElementsAre(0.5));
  EXPECT_THAT(Unary<float>(Opcode::kCeil, {1.2f, -1.2f}), ElementsAre(2, -1));
  EXPECT_THAT(Unary<float>(Opcode::kFloor, {1.2f, -1.2f}), ElementsAre(1, -2));
  EXPECT_THAT(Unary<float>(Opcode::kRoundNearestAfz, {2.5f, -2.5f, 0.4f}), ElementsAre(3, -3, 0));
  EXPECT_THAT(Unary<float>(Opcode::kRoundNearestEven, {2.5f, 3.5f, -2.5f, 0.6f}),
              ElementsAre(2, 4, -2, 1));
  std::vector<float> lg = Unary<float>(Opcode::kLog, {0, -1});
  EXPECT_EQ(lg[0], -kInf);
  EXPECT_TRUE(std::isnan(lg[1]));
}

// Values from tables (Abramowitz & Stegun), not from the libm the
// evaluator calls.
TEST_F(ElementwiseOpsTest, InverseAndHyperbolicMathAndErf) {
  EXPECT_THAT(Unary<double>(Opcode::kAcos, {0.5, 1.0, -1.0}),
              ElementsAre(::testing::DoubleNear(1.0471975511965979, 1e-15), 0.0,
                          ::testing::DoubleNear(3.141592653589793, 1e-15)));
  EXPECT_NEAR(Unary<double>(Opcode::kAsin, {0.5})[0], 0.5235987755982989, 1e-15);
  EXPECT_NEAR(Unary<double>(Opcode::kAcosh, {2.0})[0], 1.3169578969248166, 1e-15);
  EXPECT_NEAR(Unary<double>(Opcode::kAsinh, {1.0})[0], 0.881373587019543, 1e-15);
  EXPECT_NEAR(Unary<double>(Opcode::kAtanh, {0.5})[0], 0.5493061443340549, 1e-15);
  EXPECT_NEAR(Unary<double>(Opcode::kCosh, {1.0})[0], 1.5430806348152437, 1e-15);
  EXPECT_NEAR(Unary<double>(Opcode::kSinh, {1.0})[0], 1.1752011936438014, 1e-15);
  EXPECT_THAT(Unary<double>(Opcode::kErf, {0.5, 0.0, -kInf, kInf}),
              ElementsAre(::testing::DoubleNear(0.5204998778130465, 1e-15), 0.0, -1.0, 1.0));
  EXPECT_FLOAT_EQ(Unary<float>(Opcode::kErf, {1.0f})[0], 0.8427007929497149f);
  // Outside the domain: NaN (acos), inf (atanh at 1).
  EXPECT_TRUE(std::isnan(Unary<float>(Opcode::kAcos, {2.0f})[0]));
  EXPECT_EQ(Unary<float>(Opcode::kAtanh, {1.0f})[0], kInf);
  Instruction* bad = h_.OpOn(Opcode::kErf, Shape(S32, {2}), {Shape(S32, {2})});
  EXPECT_THAT(OpHarness::Infer(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("expects floating-point operands")));
}

TEST_F(ElementwiseOpsTest, PopcntAndCountLeadingZerosCountTheStoredBits) {
  EXPECT_THAT(Unary<int32_t>(Opcode::kPopcnt, {0, 7, -1, kMin32}), ElementsAre(0, 3, 32, 1));
  EXPECT_THAT(Unary<uint8_t>(Opcode::kPopcnt, {0xff, 0x10}), ElementsAre(8, 1));
  EXPECT_THAT(Unary<int64_t>(Opcode::kPopcnt, {-1}), ElementsAre(64));
  EXPECT_THAT(Unary<int32_t>(Opcode::kClz, {0, 1, -1, kMax32}), ElementsAre(32, 31, 0, 1));
  EXPECT_THAT(Unary<uint8_t>(Opcode::kClz, {0, 1, 0x80}), ElementsAre(8, 7, 0));
  EXPECT_THAT(Unary<uint16_t>(Opcode::kClz, {0x00ff}), ElementsAre(8));
  Instruction* bad = h_.OpOn(Opcode::kPopcnt, Shape(F32, {2}), {Shape(F32, {2})});
  EXPECT_THAT(OpHarness::Infer(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("expects signed integer or unsigned")));
}

TEST_F(ElementwiseOpsTest, ReducePrecisionRoundsToEvenAndFlushesOutOfRange) {
  auto reduce = [&](std::vector<float> x, int64_t e, int64_t m) {
    Shape shape(F32, {static_cast<int64_t>(x.size())});
    absl::StatusOr<Literal> r = h_.Run(Opcode::kReducePrecision, shape, {Vec<float>(x)},
                                       {{"exponent_bits", e}, {"mantissa_bits", m}});
    EXPECT_THAT(r, IsOk());
    return r.ok() ? Values<float>(*r) : std::vector<float>();
  };
  // bf16 (8, 7): 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to the
  // even mantissa (1); 1 + 3 * 2^-8 ties up to 1 + 2^-6. 1 + 2^-9 rounds down.
  EXPECT_THAT(reduce({1.00390625f, 1.01171875f, 1.001953125f, -1.01171875f}, 8, 7),
              ElementsAre(1.0f, 1.015625f, 1.0f, -1.015625f));
  // f16 (5, 10): 65504 is the largest value; 65520 rounds up to 2^16 and
  // overflows to inf; 1e-8 is below the smallest normal (2^-14): signed zero.
  std::vector<float> h = reduce({65504.0f, 65520.0f, -1e6f, 1e-8f, -1e-8f, 6.103515625e-05f}, 5, 10);
  EXPECT_THAT(h, ElementsAre(65504.0f, kInf, -kInf, 0.0f, 0.0f, 6.103515625e-05f));
  EXPECT_TRUE(std::signbit(h[4]));
  // Two mantissa bits: 3.14159 = 1.5708 * 2 -> 1.5 * 2.
  EXPECT_THAT(reduce({3.14159f, 1.9f}, 8, 2), ElementsAre(3.0f, 2.0f));
  // NaN stays NaN while a mantissa bit can hold it, else it becomes inf.
  EXPECT_TRUE(std::isnan(reduce({kNaN}, 5, 1)[0]));
  EXPECT_EQ(reduce({kNaN}, 5, 0)[0], kInf);
  // Keeping every bit is the identity.
  EXPECT_THAT(reduce({0.1f, -3.7e38f}, 8, 23), ElementsAre(0.1f, -3.7e38f));

  Instruction* bad = h_.OpOn(Opcode::kReducePrecision, Shape(F32, {2}), {Shape(F32, {2})},
                             {{"exponent_bits", int64_t{0}}, {"mantissa_bits", int64_t{3}}});
  EXPECT_THAT(OpHarness::Infer(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("exponent_bits must be at least 1")));
  Instruction* ints = h_.OpOn(Opcode::kReducePrecision, Shape(S32, {2}), {Shape(S32, {2})},
                              {{"exponent_bits", int64_t{5}}, {"mantissa_bits", int64_t{3}}});
  EXPECT_THAT(OpHarness::Infer(ints), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("expects floating-point operands")));
}

TEST_F(ElementwiseOpsTest, IsFiniteProducesPred) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kIsFinite, Shape(PRED, {4}),
                                         {Vec<float>({1, kInf, -kInf, kNaN})}));
  EXPECT_THAT(Values<bool>(r), ElementsAre(true, false, false, false));
  Instruction* bad = h_.OpOn(Opcode::kIsFinite, Shape(PRED, {2}), {Shape(S32, {2})});
  EXPECT_THAT(OpHarness::Infer(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("expects floating-point operands")));
}

TEST_F(ElementwiseOpsTest, AbsNegateSignOnIntegersAndFloats) {
  EXPECT_THAT(Unary<int32_t>(Opcode::kAbs, {-3, 4, kMin32}), ElementsAre(3, 4, kMin32));
  EXPECT_THAT(Unary<float>(Opcode::kAbs, {-3.5f, 2}), ElementsAre(3.5f, 2));
  EXPECT_THAT(Unary<int8_t>(Opcode::kNegate, {-128, 5}), ElementsAre(-128, -5));
  EXPECT_THAT(Unary<uint8_t>(Opcode::kNegate, {1, 0}), ElementsAre(255, 0));
  EXPECT_THAT(Unary<int32_t>(Opcode::kSign, {-5, 0, 7}), ElementsAre(-1, 0, 1));
  EXPECT_THAT(Unary<uint8_t>(Opcode::kSign, {0, 200}), ElementsAre(0, 1));
  std::vector<float> s = Unary<float>(Opcode::kSign, {-2, -0.0f, 0.0f, 3, kNaN});
  EXPECT_EQ(s[0], -1);
  EXPECT_TRUE(s[1] == 0 && std::signbit(s[1]));
  EXPECT_TRUE(s[2] == 0 && !std::signbit(s[2]));
  EXPECT_EQ(s[3], 1);
  EXPECT_TRUE(std::isnan(s[4]));
  Instruction* bad = h_.OpOn(Opcode::kAbs, Shape(U32, {4}), {Shape(U32, {4})});
  EXPECT_THAT(OpHarness::Infer(bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("abs expects signed integer or floating-point operands, got "
                                 "u32[4]")));
}

TEST_F(ElementwiseOpsTest, CopyIsIdentityForEveryType) {
  int count = 0;
  const PrimitiveType* types = AllArrayTypes(&count);
  for (int i = 0; i < count; ++i) {
    Shape shape(types[i], {3});
    Literal in(shape);
    for (int64_t k = 0; k < 3; ++k) in.SetFromInt64(k, k + 1);
    ASSERT_OK_AND_ASSIGN(Literal out, h_.Run(Opcode::kCopy, shape, {in}));
    EXPECT_EQ(out, in) << shape.ToString();
  }
}

TEST_F(ElementwiseOpsTest, CopyTakesTuples) {
  Literal tuple = Literal::Tuple({Vec<float>({1, 2}), Lit<int32_t>({}, {3})});
  ASSERT_OK_AND_ASSIGN(Literal out, h_.Run(Opcode::kCopy, tuple.shape(), {tuple}));
  EXPECT_EQ(out, tuple);
}

TEST_F(ElementwiseOpsTest, CompareDirectionsWithNaN) {
  Literal a = Vec<float>({1, 2, kNaN, -0.0f});
  Literal b = Vec<float>({2, 2, kNaN, 0.0f});
  EXPECT_THAT(Compare(a, b, "EQ"), ElementsAre(false, true, false, true));
  EXPECT_THAT(Compare(a, b, "NE"), ElementsAre(true, false, true, false));
  EXPECT_THAT(Compare(a, b, "LT"), ElementsAre(true, false, false, false));
  EXPECT_THAT(Compare(a, b, "LE"), ElementsAre(true, true, false, true));
  EXPECT_THAT(Compare(a, b, "GT"), ElementsAre(false, false, false, false));
  EXPECT_THAT(Compare(a, b, "GE"), ElementsAre(false, true, false, true));
  EXPECT_THAT(Compare(a, b, "EQ", "FLOAT"), ElementsAre(false, true, false, true));
}

TEST_F(ElementwiseOpsTest, CompareTotalOrder) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < NaN.
  Literal a = Vec<float>({-0.0f, 1, kInf, -kNaN, kNaN, kNaN});
  Literal b = Vec<float>({0.0f, kInf, kNaN, -kInf, kNaN, 1});
  EXPECT_THAT(Compare(a, b, "LT", "TOTALORDER"), ElementsAre(true, true, true, true, false, false));
  EXPECT_THAT(Compare(a, b, "EQ", "TOTALORDER"),
              ElementsAre(false, false, false, false, true, false));
  EXPECT_THAT(Compare(Vec<Half>({Half(-0.0f), Half(2.0f)}), Vec<Half>({Half(0.0f), Half(1.0f)}),
                      "LT", "TOTALORDER"),
              ElementsAre(true, false));
}

TEST_F(ElementwiseOpsTest, CompareIntegersAndPred) {
  EXPECT_THAT(Compare(Vec<int32_t>({-1, 5}), Vec<int32_t>({1, 5}), "LT", "SIGNED"),
              ElementsAre(true, false));
  EXPECT_THAT(Compare(Vec<uint32_t>({0xffffffffu, 1}), Vec<uint32_t>({1, 1}), "GT", "UNSIGNED"),
              ElementsAre(true, false));
  EXPECT_THAT(Compare(Preds({2}, {true, false}), Preds({2}, {false, false}), "GT"),
              ElementsAre(true, false));
}

TEST_F(ElementwiseOpsTest, CompareRejectsBadAttributes) {
  Shape f(F32, {2});
  Instruction* bad_dir =
      h_.OpOn(Opcode::kCompare, Shape(PRED, {2}), {f, f}, {{"direction", std::string("XX")}});
  EXPECT_THAT(OpHarness::Infer(bad_dir),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("direction 'XX'")));
  Instruction* missing = h_.OpOn(Opcode::kCompare, Shape(PRED, {2}), {f, f});
  EXPECT_THAT(OpHarness::Infer(missing),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("direction")));
  Instruction* bad_type =
      h_.OpOn(Opcode::kCompare, Shape(PRED, {2}), {f, f},
              {{"direction", std::string("LT")}, {"type", std::string("SIGNED")}});
  EXPECT_THAT(OpHarness::Infer(bad_type),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("comparison type SIGNED does not apply to f32")));
  Instruction* unknown_type =
      h_.OpOn(Opcode::kCompare, Shape(PRED, {2}), {f, f},
              {{"direction", std::string("LT")}, {"type", std::string("WEIRD")}});
  EXPECT_THAT(OpHarness::Infer(unknown_type),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'WEIRD'")));
}

TEST_F(ElementwiseOpsTest, SelectWithArrayAndScalarPredicate) {
  Shape s(S32, {3});
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kSelect, s,
                                         {Preds({3}, {true, false, true}), Vec<int32_t>({1, 2, 3}),
                                          Vec<int32_t>({10, 20, 30})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(1, 20, 3));
  ASSERT_OK_AND_ASSIGN(Literal r2, h_.Run(Opcode::kSelect, s,
                                          {Preds({}, {false}), Vec<int32_t>({1, 2, 3}),
                                           Vec<int32_t>({10, 20, 30})}));
  EXPECT_THAT(Values<int32_t>(r2), ElementsAre(10, 20, 30));

  Instruction* bad_pred = h_.OpOn(Opcode::kSelect, s, {Shape(S32, {3}), s, s});
  EXPECT_THAT(OpHarness::Infer(bad_pred),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("predicate must be pred")));
  Instruction* bad_dims = h_.OpOn(Opcode::kSelect, s, {Shape(PRED, {2}), s, s});
  EXPECT_THAT(OpHarness::Infer(bad_dims),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a scalar or match")));
  Instruction* bad_branch = h_.OpOn(Opcode::kSelect, s, {Shape(PRED, {3}), s, Shape(F32, {3})});
  EXPECT_THAT(OpHarness::Infer(bad_branch), StatusIs(absl::StatusCode::kInvalidArgument,
                                                     HasSubstr("s32[3] and f32[3]")));
}

TEST_F(ElementwiseOpsTest, ClampWithScalarAndArrayBounds) {
  Shape s(F32, {4});
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kClamp, s,
                                         {Lit<float>({}, {0}), Vec<float>({-1, 0.5f, 2, kNaN}),
                                          Lit<float>({}, {1})}));
  std::vector<float> v = Values<float>(r);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 0.5f);
  EXPECT_EQ(v[2], 1);
  EXPECT_TRUE(std::isnan(v[3]));
  ASSERT_OK_AND_ASSIGN(Literal r2, h_.Run(Opcode::kClamp, Shape(S32, {3}),
                                          {Vec<int32_t>({0, 5, -10}), Vec<int32_t>({-3, 3, 3}),
                                           Vec<int32_t>({1, 10, -5})}));
  EXPECT_THAT(Values<int32_t>(r2), ElementsAre(0, 5, -5));
  Instruction* bad = h_.OpOn(Opcode::kClamp, s, {Shape(F32, {2}), s, Shape(F32, {})});
  EXPECT_THAT(OpHarness::Infer(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("lower bound f32[2] must be a scalar")));
}

TEST_F(ElementwiseOpsTest, ConvertFloatToIntSaturates) {
  EXPECT_THAT((Convert<int32_t, float>({kNaN, 1e10f, -1e10f, 3.7f, -3.7f, kInf, -kInf})),
              ElementsAre(0, kMax32, kMin32, 3, -3, kMax32, kMin32));
  EXPECT_THAT((Convert<uint8_t, float>({-1, 300, 2.9f, -0.5f, kNaN})), ElementsAre(0, 255, 2, 0, 0));
  EXPECT_THAT((Convert<int64_t, float>({1e19f, -1e19f})),
              ElementsAre(std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()));
  EXPECT_THAT((Convert<uint64_t, double>({-5, 1e20, 12345678901234.0})),
              ElementsAre(0u, std::numeric_limits<uint64_t>::max(), 12345678901234u));
  EXPECT_THAT((Convert<int8_t, Half>({Half(200.0f), Half(-7.5f)})), ElementsAre(127, -7));
  // 2^31 - 128 is exactly representable in f32 and below the bound.
  EXPECT_THAT((Convert<int32_t, float>({2147483520.0f})), ElementsAre(2147483520));
}

TEST_F(ElementwiseOpsTest, ConvertBetweenOtherTypes) {
  EXPECT_THAT((Convert<int8_t, int64_t>({300, -129})), ElementsAre(44, 127));
  EXPECT_THAT((Convert<uint32_t, int32_t>({-1})), ElementsAre(0xffffffffu));
  EXPECT_THAT((Convert<float, int32_t>({16777217})), ElementsAre(16777216.0f));
  std::vector<Half> h = Convert<Half, int32_t>({2049, 70000});
  EXPECT_EQ(static_cast<float>(h[0]), 2048.0f);
  EXPECT_EQ(static_cast<float>(h[1]), kInf);
  std::vector<BFloat16> b = Convert<BFloat16, float>({1.0f + std::ldexp(1.0f, -8)});
  EXPECT_EQ(static_cast<float>(b[0]), 1.0f);
  EXPECT_THAT((Convert<float, Half>({Half(0.5f)})), ElementsAre(0.5f));

  ASSERT_OK_AND_ASSIGN(Literal p, h_.Run(Opcode::kConvert, Shape(PRED, {4}),
                                         {Vec<float>({0, 0.5f, kNaN, -0.0f})}));
  EXPECT_THAT(Values<bool>(p), ElementsAre(false, true, true, false));
  ASSERT_OK_AND_ASSIGN(Literal f, h_.Run(Opcode::kConvert, Shape(F32, {2}),
                                         {Preds({2}, {true, false})}));
  EXPECT_THAT(Values<float>(f), ElementsAre(1.0f, 0.0f));

  Instruction* bad = h_.OpOn(Opcode::kConvert, Shape(F32, {3}), {Shape(S32, {2})});
  ASSERT_OK_AND_ASSIGN(Shape inferred, OpHarness::Infer(bad));
  EXPECT_EQ(inferred, Shape(F32, {2}));  // the verifier reports the mismatch
}

TEST_F(ElementwiseOpsTest, BinaryTypeErrorsNameBothShapes) {
  Instruction* mixed = h_.OpOn(Opcode::kAdd, Shape(F32, {2, 3}), {Shape(F32, {2, 3}), Shape(S32, {2, 3})});
  EXPECT_THAT(OpHarness::Infer(mixed),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("operand shapes f32[2,3] and s32[2,3] have different element types")));
  Instruction* dims = h_.OpOn(Opcode::kMultiply, Shape(F32, {2}), {Shape(F32, {2}), Shape(F32, {3})});
  EXPECT_THAT(OpHarness::Infer(dims), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("f32[2] and f32[3]")));
  Instruction* exp_int = h_.OpOn(Opcode::kExp, Shape(S32, {2}), {Shape(S32, {2})});
  EXPECT_THAT(OpHarness::Infer(exp_int),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exponential expects floating-point operands, got s32[2]")));
  Instruction* and_float = h_.OpOn(Opcode::kAnd, Shape(F32, {2}), {Shape(F32, {2}), Shape(F32, {2})});
  EXPECT_THAT(OpHarness::Infer(and_float), StatusIs(absl::StatusCode::kInvalidArgument,
                                                    HasSubstr("pred or signed integer")));
  Instruction* shift_pred = h_.OpOn(Opcode::kShiftLeft, Shape(PRED, {2}), {Shape(PRED, {2}), Shape(PRED, {2})});
  EXPECT_THAT(OpHarness::Infer(shift_pred), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  Instruction* atan_int = h_.OpOn(Opcode::kAtan2, Shape(S32, {2}), {Shape(S32, {2}), Shape(S32, {2})});
  EXPECT_THAT(OpHarness::Infer(atan_int), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  Instruction* add_pred = h_.OpOn(Opcode::kAdd, Shape(PRED, {2}), {Shape(PRED, {2}), Shape(PRED, {2})});
  EXPECT_THAT(OpHarness::Infer(add_pred), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  Instruction* tuple = h_.OpOn(Opcode::kNegate, Shape(F32, {}),
                               {Shape::Tuple({Shape(F32, {})})});
  EXPECT_THAT(OpHarness::Infer(tuple), StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("must be an array")));
  Instruction* too_few = h_.Op(Opcode::kAdd, Shape(F32, {}), {h_.Param(Shape(F32, {}))});
  EXPECT_THAT(OpHarness::Infer(too_few), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

TEST_F(ElementwiseOpsTest, Atan2) {
  std::vector<double> r = Binary<double>(Opcode::kAtan2, {1, -1, 0}, {1, -1, -1});
  EXPECT_DOUBLE_EQ(r[0], std::atan2(1.0, 1.0));
  EXPECT_DOUBLE_EQ(r[1], std::atan2(-1.0, -1.0));
  EXPECT_DOUBLE_EQ(r[2], std::atan2(0.0, -1.0));
}

TEST_F(ElementwiseOpsTest, EmptyAndScalarShapes) {
  ASSERT_OK_AND_ASSIGN(Literal e, h_.Run(Opcode::kAdd, Shape(F32, {0, 3}),
                                         {Literal(Shape(F32, {0, 3})), Literal(Shape(F32, {0, 3}))}));
  EXPECT_EQ(e.num_elements(), 0);
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kMultiply, Shape(S64, {}),
                                         {Lit<int64_t>({}, {6}), Lit<int64_t>({}, {7})}));
  EXPECT_EQ(s.data<int64_t>()[0], 42);
  ASSERT_OK_AND_ASSIGN(Literal c, h_.Run(Opcode::kCompare, Shape(PRED, {0}),
                                         {Vec<float>({}), Vec<float>({})},
                                         {{"direction", std::string("LT")}}));
  EXPECT_EQ(c.num_elements(), 0);
}

TEST_F(ElementwiseOpsTest, TraitsMarkElementwiseAndCommutative) {
  for (Opcode op : {Opcode::kAdd, Opcode::kMultiply, Opcode::kMaximum, Opcode::kMinimum,
                    Opcode::kAnd, Opcode::kOr, Opcode::kXor}) {
    EXPECT_TRUE(GetOpDef(op).traits.commutative) << OpcodeName(op);
    EXPECT_TRUE(GetOpDef(op).traits.elementwise) << OpcodeName(op);
  }
  for (Opcode op : {Opcode::kSubtract, Opcode::kDivide, Opcode::kPower, Opcode::kCompare}) {
    EXPECT_FALSE(GetOpDef(op).traits.commutative) << OpcodeName(op);
    EXPECT_TRUE(GetOpDef(op).traits.elementwise) << OpcodeName(op);
  }
  for (Opcode op : {Opcode::kSelect, Opcode::kClamp, Opcode::kConvert, Opcode::kExp,
                    Opcode::kIsFinite, Opcode::kNot}) {
    EXPECT_TRUE(GetOpDef(op).traits.elementwise) << OpcodeName(op);
    EXPECT_FALSE(GetOpDef(op).traits.side_effecting) << OpcodeName(op);
  }
}

// Shape inference and evaluation must agree on which types an op accepts:
// whenever inference accepts a type, evaluation produces the inferred shape.
TEST_F(ElementwiseOpsTest, InferenceAndEvaluationAgreeForEveryType) {
  const Opcode kUnary[] = {
      Opcode::kAbs,   Opcode::kCbrt,  Opcode::kCeil,  Opcode::kCopy,     Opcode::kCos,
      Opcode::kExp,   Opcode::kExpm1, Opcode::kFloor, Opcode::kIsFinite, Opcode::kLog,
      Opcode::kLog1p, Opcode::kLogistic, Opcode::kNegate, Opcode::kNot,
      Opcode::kRoundNearestAfz, Opcode::kRoundNearestEven, Opcode::kRsqrt, Opcode::kSign,
      Opcode::kSin,   Opcode::kSqrt,  Opcode::kTan,   Opcode::kTanh, Opcode::kAcos,
      Opcode::kAcosh, Opcode::kAsin,  Opcode::kAsinh, Opcode::kAtanh, Opcode::kCosh,
      Opcode::kSinh,  Opcode::kErf,   Opcode::kPopcnt, Opcode::kClz};
  const Opcode kBinary[] = {
      Opcode::kAdd,     Opcode::kAnd,       Opcode::kAtan2,     Opcode::kDivide,
      Opcode::kMaximum, Opcode::kMinimum,   Opcode::kMultiply,  Opcode::kOr,
      Opcode::kPower,   Opcode::kRemainder, Opcode::kShiftLeft, Opcode::kShiftRightArithmetic,
      Opcode::kShiftRightLogical, Opcode::kSubtract, Opcode::kXor};
  int count = 0;
  const PrimitiveType* types = AllArrayTypes(&count);
  int accepted = 0;
  for (int t = 0; t < count; ++t) {
    Shape shape(types[t], {2});
    Literal arg(shape);
    arg.SetFromInt64(0, 3);
    arg.SetFromInt64(1, 1);
    auto check = [&](Opcode op, int arity) {
      std::vector<Shape> shapes(arity, shape);
      Instruction* inst = h_.OpOn(op, shape, shapes);
      absl::StatusOr<Shape> inferred = OpHarness::Infer(inst);
      std::vector<Literal> args(arity, arg);
      absl::StatusOr<Literal> value = h_.Eval(inst, args);
      ASSERT_EQ(inferred.ok(), value.ok())
          << OpcodeName(op) << " on " << shape.ToString() << ": " << inferred.status() << " / "
          << value.status();
      if (inferred.ok()) {
        ++accepted;
        EXPECT_EQ(value->shape(), *inferred) << OpcodeName(op);
      }
    };
    for (Opcode op : kUnary) check(op, 1);
    for (Opcode op : kBinary) check(op, 2);
  }
  EXPECT_GT(accepted, 200);
}

TEST_F(ElementwiseOpsTest, MillionElementAddIsFast) {
  const int64_t n = 1 << 20;
  Shape shape(F32, {n});
  Literal a(shape), b(shape);
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = static_cast<float>(i);
    b.data<float>()[i] = 1.0f;
  }
  Instruction* add = h_.OpOn(Opcode::kAdd, shape, {shape, shape});
  auto start = std::chrono::steady_clock::now();
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Eval(add, {a, b}));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.data<float>()[n - 1], static_cast<float>(n));
  EXPECT_LT(seconds, 0.5);
}

TEST_F(ElementwiseOpsTest, EvaluateRejectsMismatchedValues) {
  Shape s(F32, {2});
  Instruction* add = h_.OpOn(Opcode::kAdd, s, {s, s});
  EXPECT_THAT(h_.Eval(add, {Vec<float>({1, 2}), Vec<float>({1, 2, 3})}),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(h_.Eval(add, {Vec<float>({1, 2})}), StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

}  // namespace
}  // namespace sharc::hlo
