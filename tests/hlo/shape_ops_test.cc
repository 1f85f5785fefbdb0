// Shape and data-movement op definitions: inferred shapes, attribute
// validation (including hostile values the parser may hand over) and the
// reference evaluator against hand-computed results.
#include <cstdint>
#include <cstring>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/ops/op_def.h"
#include "hlo/text/parser.h"
#include "tests/hlo/op_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

using ::sharc::hlo::testing::Lit;
using ::sharc::hlo::testing::NamedAttr;
using ::sharc::hlo::testing::OpHarness;
using ::sharc::hlo::testing::Preds;
using ::sharc::hlo::testing::Values;
using ::sharc::hlo::testing::Vec;
using ::sharc::testing::IsOk;
using ::sharc::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType F16 = PrimitiveType::kF16;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType U64 = PrimitiveType::kU64;
constexpr PrimitiveType PRED = PrimitiveType::kPred;
constexpr int64_t kBig = std::numeric_limits<int64_t>::max();

std::vector<int32_t> Iota(int n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

NamedAttr Dims(IntList dims) { return {"dimensions", std::move(dims)}; }
NamedAttr SliceAttr(IntListList s) { return {"slice", std::move(s)}; }
NamedAttr PaddingAttr(IntListList p) { return {"padding", std::move(p)}; }

class ShapeOpsTest : public ::testing::Test {
 protected:
  // Infers the shape of `op` over operands of the given shapes.
  absl::StatusOr<Shape> Infer(Opcode op, const Shape& declared, std::vector<Shape> operands,
                              std::vector<NamedAttr> attrs) {
    return OpHarness::Infer(h_.OpOn(op, declared, operands, std::move(attrs)));
  }
  OpHarness h_;
};

MATCHER_P(InvalidWith, text, "") {
  return ::testing::ExplainMatchResult(
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(text)), arg, result_listener);
}

// ---------------------------------------------------------------------------
// broadcast

TEST_F(ShapeOpsTest, BroadcastMapsOperandDimensions) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kBroadcast, Shape(S32, {2, 3}),
                                         {Vec<int32_t>({1, 2})}, {Dims({0})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(1, 1, 1, 2, 2, 2));
  ASSERT_OK_AND_ASSIGN(Literal c, h_.Run(Opcode::kBroadcast, Shape(S32, {2, 3}),
                                         {Vec<int32_t>({1, 2, 3})}, {Dims({1})}));
  EXPECT_THAT(Values<int32_t>(c), ElementsAre(1, 2, 3, 1, 2, 3));
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kBroadcast, Shape(F32, {2, 2}),
                                         {Lit<float>({}, {7})}, {Dims({})}));
  EXPECT_THAT(Values<float>(s), ElementsAre(7, 7, 7, 7));
  ASSERT_OK_AND_ASSIGN(Literal m, h_.Run(Opcode::kBroadcast, Shape(S32, {2, 2, 3}),
                                         {Lit<int32_t>({2, 3}, Iota(6))}, {Dims({0, 2})}));
  EXPECT_THAT(Values<int32_t>(m), ElementsAre(0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5));
  ASSERT_OK_AND_ASSIGN(Literal e, h_.Run(Opcode::kBroadcast, Shape(S32, {0, 3}),
                                         {Vec<int32_t>({1, 2, 3})}, {Dims({1})}));
  EXPECT_EQ(e.num_elements(), 0);
}

TEST_F(ShapeOpsTest, BroadcastRejectsBadDimensions) {
  const Shape out(F32, {2, 3});
  const Shape v2(F32, {2});
  EXPECT_THAT(Infer(Opcode::kBroadcast, out, {v2}, {Dims({3})}),
              InvalidWith("broadcast dimension 3 out of range for rank-2 output"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, out, {v2}, {Dims({-1})}), InvalidWith("out of range"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, out, {v2}, {Dims({1})}),
              InvalidWith("operand dimension 0 has size 2 but result dimension 1 has size 3"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, out, {v2}, {Dims({0, 1})}),
              InvalidWith("has 2 dimensions for rank-1 operand"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, Shape(F32, {2, 2}), {Shape(F32, {2, 2})}, {Dims({1, 0})}),
              InvalidWith("strictly increasing"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, out, {v2}, {}), InvalidWith("dimensions"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, Shape(S32, {2, 3}), {v2}, {Dims({0})}),
              InvalidWith("element type"));
  EXPECT_THAT(Infer(Opcode::kBroadcast, Shape(F32, {-2, 3}), {v2}, {Dims({0})}),
              InvalidWith("negative"));
}

// ---------------------------------------------------------------------------
// reshape

TEST_F(ShapeOpsTest, ReshapeKeepsRowMajorOrder) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kReshape, Shape(S32, {3, 2}),
                                         {Lit<int32_t>({2, 3}, Iota(6))}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(0, 1, 2, 3, 4, 5));
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kReshape, Shape(S32, {}),
                                         {Lit<int32_t>({1, 1}, {9})}));
  EXPECT_THAT(Values<int32_t>(s), ElementsAre(9));
  EXPECT_THAT(Infer(Opcode::kReshape, Shape(F32, {4, 2}), {Shape(F32, {6})}, {}),
              InvalidWith("cannot reshape f32[6] (6 elements) to f32[4,2] (8 elements)"));
  EXPECT_THAT(Infer(Opcode::kReshape, Shape(S32, {6}), {Shape(F32, {6})}, {}),
              InvalidWith("element type"));
  EXPECT_THAT(Infer(Opcode::kReshape, Shape::Tuple({}), {Shape(F32, {6})}, {}),
              InvalidWith("must produce an array"));
}

// ---------------------------------------------------------------------------
// transpose

TEST_F(ShapeOpsTest, TransposePermutesDimensions) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kTranspose, Shape(S32, {3, 2}),
                                         {Lit<int32_t>({2, 3}, Iota(6))}, {Dims({1, 0})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(0, 3, 1, 4, 2, 5));
  // result dim i = operand dim perm[i]: [2,3,4] with {2,0,1} -> [4,2,3].
  ASSERT_OK_AND_ASSIGN(Literal t, h_.Run(Opcode::kTranspose, Shape(S32, {4, 2, 3}),
                                         {Lit<int32_t>({2, 3, 4}, Iota(24))}, {Dims({2, 0, 1})}));
  // t[k][i][j] = operand[i][j][k] = 12 i + 4 j + k.
  std::vector<int32_t> v = Values<int32_t>(t);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 4);   // k=0 i=0 j=1
  EXPECT_EQ(v[3], 12);  // k=0 i=1 j=0
  EXPECT_EQ(v[6], 1);   // k=1 i=0 j=0
  EXPECT_EQ(v[23], 23);
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kTranspose, Shape(S32, {}),
                                         {Lit<int32_t>({}, {5})}, {Dims({})}));
  EXPECT_THAT(Values<int32_t>(s), ElementsAre(5));
  EXPECT_THAT(Infer(Opcode::kTranspose, Shape(F32, {2, 2}), {Shape(F32, {2, 2})}, {Dims({0, 0})}),
              InvalidWith("not a permutation"));
  EXPECT_THAT(Infer(Opcode::kTranspose, Shape(F32, {2, 2}), {Shape(F32, {2, 2})}, {Dims({0})}),
              InvalidWith("not a permutation"));
  EXPECT_THAT(Infer(Opcode::kTranspose, Shape(F32, {2, 2}), {Shape(F32, {2, 2})}, {Dims({0, 7})}),
              InvalidWith("not a permutation"));
}

// ---------------------------------------------------------------------------
// slice

TEST_F(ShapeOpsTest, SliceWithStrides) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kSlice, Shape(S32, {3}), {Vec<int32_t>(Iota(6))},
                                         {SliceAttr({{1, 6, 2}})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(1, 3, 5));
  ASSERT_OK_AND_ASSIGN(Literal m, h_.Run(Opcode::kSlice, Shape(S32, {2, 2}),
                                         {Lit<int32_t>({3, 4}, Iota(12))},
                                         {SliceAttr({{1, 3, 1}, {0, 4, 3}})}));
  EXPECT_THAT(Values<int32_t>(m), ElementsAre(4, 7, 8, 11));
  ASSERT_OK_AND_ASSIGN(Literal e, h_.Run(Opcode::kSlice, Shape(S32, {0}), {Vec<int32_t>(Iota(4))},
                                         {SliceAttr({{2, 2, 1}})}));
  EXPECT_EQ(e.num_elements(), 0);
  // A stride larger than the range takes only the first element; no overflow.
  ASSERT_OK_AND_ASSIGN(Literal h, h_.Run(Opcode::kSlice, Shape(S32, {1}), {Vec<int32_t>(Iota(5))},
                                         {SliceAttr({{1, 5, kBig}})}));
  EXPECT_THAT(Values<int32_t>(h), ElementsAre(1));
  // Two-element entries mean unit stride.
  ASSERT_OK_AND_ASSIGN(Literal two, h_.Run(Opcode::kSlice, Shape(S32, {2}), {Vec<int32_t>(Iota(5))},
                                           {SliceAttr({{3, 5}})}));
  EXPECT_THAT(Values<int32_t>(two), ElementsAre(3, 4));
}

TEST_F(ShapeOpsTest, SliceRejectsBadEntries) {
  const Shape m(F32, {4, 5});
  const Shape out(F32, {1, 1});
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, 1, 1}})}),
              InvalidWith("has 1 slice entries for rank-2 operand f32[4,5]"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{2, 1, 1}, {0, 1, 1}})}),
              InvalidWith("start <= limit"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, 5, 1}, {0, 1, 1}})}),
              InvalidWith("slice [0:5] in dimension 0 is not within [0:4]"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{-1, 1, 1}, {0, 1, 1}})}),
              InvalidWith("not within"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, 1, 0}, {0, 1, 1}})}),
              InvalidWith("stride 0 in dimension 0 must be positive"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, 1, -2}, {0, 1, 1}})}),
              InvalidWith("must be positive"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, kBig, 1}, {0, 1, 1}})}),
              InvalidWith("not within"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {SliceAttr({{0, 1, 1, 1}, {0, 1, 1}})}),
              InvalidWith("slice entry 0"));
  EXPECT_THAT(Infer(Opcode::kSlice, out, {m}, {}), InvalidWith("slice"));
}

// ---------------------------------------------------------------------------
// dynamic-slice and dynamic-update-slice

TEST_F(ShapeOpsTest, DynamicSliceClampsStartIndices) {
  const Shape out(S32, {3});
  auto run = [&](Literal index) {
    return h_.Run(Opcode::kDynamicSlice, out, {Vec<int32_t>(Iota(5)), index},
                  {{"dynamic_slice_sizes", IntList{3}}});
  };
  ASSERT_OK_AND_ASSIGN(Literal a, run(Lit<int32_t>({}, {1})));
  EXPECT_THAT(Values<int32_t>(a), ElementsAre(1, 2, 3));
  ASSERT_OK_AND_ASSIGN(Literal b, run(Lit<int32_t>({}, {4})));
  EXPECT_THAT(Values<int32_t>(b), ElementsAre(2, 3, 4));
  ASSERT_OK_AND_ASSIGN(Literal c, run(Lit<int32_t>({}, {-3})));
  EXPECT_THAT(Values<int32_t>(c), ElementsAre(0, 1, 2));
  ASSERT_OK_AND_ASSIGN(Literal d, run(Lit<uint64_t>({}, {~uint64_t{0}})));
  EXPECT_THAT(Values<int32_t>(d), ElementsAre(2, 3, 4));

  ASSERT_OK_AND_ASSIGN(Literal m, h_.Run(Opcode::kDynamicSlice, Shape(S32, {2, 2}),
                                         {Lit<int32_t>({3, 4}, Iota(12)), Lit<int64_t>({}, {1}),
                                          Lit<int64_t>({}, {3})},
                                         {{"dynamic_slice_sizes", IntList{2, 2}}}));
  EXPECT_THAT(Values<int32_t>(m), ElementsAre(6, 7, 10, 11));
}

TEST_F(ShapeOpsTest, DynamicSliceRejectsBadOperands) {
  const Shape v(F32, {5});
  const Shape idx(S32, {});
  const NamedAttr sizes{"dynamic_slice_sizes", IntList{3}};
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {3}), {v}, {sizes}),
              InvalidWith("takes 1 + rank (1) = 2 operands, got 1"));
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {3}), {v, Shape(F32, {})}, {sizes}),
              InvalidWith("start index operand 1 must be an integer scalar, got f32[]"));
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {3}), {v, Shape(S32, {1})}, {sizes}),
              InvalidWith("integer scalar"));
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {6}), {v, idx},
                    {{"dynamic_slice_sizes", IntList{6}}}),
              InvalidWith("slice size 6 in dimension 0 is not within [0, 5]"));
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {6}), {v, idx},
                    {{"dynamic_slice_sizes", IntList{-1}}}),
              InvalidWith("not within"));
  EXPECT_THAT(Infer(Opcode::kDynamicSlice, Shape(F32, {3}), {v, idx},
                    {{"dynamic_slice_sizes", IntList{3, 3}}}),
              InvalidWith("has 2 dynamic_slice_sizes for rank-1 operand"));
  ASSERT_OK_AND_ASSIGN(Shape ok, Infer(Opcode::kDynamicSlice, Shape(F32, {3}), {v, idx}, {sizes}));
  EXPECT_EQ(ok, Shape(F32, {3}));
}

TEST_F(ShapeOpsTest, DynamicUpdateSliceClampsAndWrites) {
  const Shape s(S32, {5});
  auto run = [&](int32_t start) {
    return h_.Run(Opcode::kDynamicUpdateSlice, s,
                  {Vec<int32_t>(Iota(5)), Vec<int32_t>({-1, -2}), Lit<int32_t>({}, {start})});
  };
  ASSERT_OK_AND_ASSIGN(Literal a, run(1));
  EXPECT_THAT(Values<int32_t>(a), ElementsAre(0, -1, -2, 3, 4));
  ASSERT_OK_AND_ASSIGN(Literal b, run(10));
  EXPECT_THAT(Values<int32_t>(b), ElementsAre(0, 1, 2, -1, -2));
  ASSERT_OK_AND_ASSIGN(Literal c, run(-10));
  EXPECT_THAT(Values<int32_t>(c), ElementsAre(-1, -2, 2, 3, 4));

  ASSERT_OK_AND_ASSIGN(Literal m,
                       h_.Run(Opcode::kDynamicUpdateSlice, Shape(S32, {3, 3}),
                              {Lit<int32_t>({3, 3}, Iota(9)), Lit<int32_t>({2, 1}, {-1, -2}),
                               Lit<int32_t>({}, {2}), Lit<int32_t>({}, {1})}));
  EXPECT_THAT(Values<int32_t>(m), ElementsAre(0, 1, 2, 3, -1, 5, 6, -2, 8));

  EXPECT_THAT(Infer(Opcode::kDynamicUpdateSlice, s, {s, Shape(S32, {6}), Shape(S32, {})}, {}),
              InvalidWith("larger than operand"));
  EXPECT_THAT(Infer(Opcode::kDynamicUpdateSlice, s, {s, Shape(F32, {2}), Shape(S32, {})}, {}),
              InvalidWith("different element types"));
  EXPECT_THAT(Infer(Opcode::kDynamicUpdateSlice, s, {s, Shape(S32, {1, 1}), Shape(S32, {})}, {}),
              InvalidWith("must have the rank of operand"));
  EXPECT_THAT(Infer(Opcode::kDynamicUpdateSlice, s, {s, Shape(S32, {1})}, {}),
              InvalidWith("operands"));
}

// ---------------------------------------------------------------------------
// concatenate

TEST_F(ShapeOpsTest, ConcatenateAlongOneDimension) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kConcatenate, Shape(S32, {2, 5}),
                                         {Lit<int32_t>({2, 2}, {0, 1, 2, 3}),
                                          Lit<int32_t>({2, 0}, {}),
                                          Lit<int32_t>({2, 3}, {10, 11, 12, 13, 14, 15})},
                                         {Dims({1})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(0, 1, 10, 11, 12, 2, 3, 13, 14, 15));
  ASSERT_OK_AND_ASSIGN(Literal v, h_.Run(Opcode::kConcatenate, Shape(S32, {3}),
                                         {Vec<int32_t>({1}), Vec<int32_t>({2, 3})}, {Dims({0})}));
  EXPECT_THAT(Values<int32_t>(v), ElementsAre(1, 2, 3));
  ASSERT_OK_AND_ASSIGN(Literal one, h_.Run(Opcode::kConcatenate, Shape(S32, {2}),
                                           {Vec<int32_t>({4, 5})}, {Dims({0})}));
  EXPECT_THAT(Values<int32_t>(one), ElementsAre(4, 5));
}

TEST_F(ShapeOpsTest, ConcatenateRejectsBadOperands) {
  const Shape a(F32, {2, 3});
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, a}, {Dims({0, 1})}),
              InvalidWith("exactly one concatenation dimension"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, a}, {Dims({})}),
              InvalidWith("exactly one concatenation dimension"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, a}, {Dims({2})}),
              InvalidWith("dimension 2 out of range for rank-2 operand"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, Shape(S32, {2, 3})}, {Dims({0})}),
              InvalidWith("different element types"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, Shape(F32, {2, 4})}, {Dims({0})}),
              InvalidWith("differ in dimension 1"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {a, Shape(F32, {2})}, {Dims({0})}),
              InvalidWith("different ranks"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, Shape(F32, {}), {Shape(F32, {}), Shape(F32, {})},
                    {Dims({0})}),
              InvalidWith("out of range"));
  EXPECT_THAT(Infer(Opcode::kConcatenate, a, {}, {Dims({0})}), InvalidWith("at least 1"));
}

// ---------------------------------------------------------------------------
// pad

TEST_F(ShapeOpsTest, PadLowHighInterior) {
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kPad, Shape(S32, {8}),
                                         {Vec<int32_t>({1, 2, 3}), Lit<int32_t>({}, {0})},
                                         {PaddingAttr({{1, 2, 1}})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(0, 1, 0, 2, 0, 3, 0, 0));
}

TEST_F(ShapeOpsTest, PadNegativeCrops) {
  // Full interior-padded row is {1,9,2,9,3}; cropping one on each side.
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kPad, Shape(S32, {3}),
                                         {Vec<int32_t>({1, 2, 3}), Lit<int32_t>({}, {9})},
                                         {PaddingAttr({{-1, -1, 1}})}));
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(9, 2, 9));
  // Cropping two from the front skips the first operand element entirely.
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kPad, Shape(S32, {4}),
                                         {Vec<int32_t>({1, 2, 3}), Lit<int32_t>({}, {9})},
                                         {PaddingAttr({{-2, 1, 1}})}));
  EXPECT_THAT(Values<int32_t>(s), ElementsAre(2, 9, 3, 9));
  // Mixed: negative low, positive high.
  ASSERT_OK_AND_ASSIGN(Literal t, h_.Run(Opcode::kPad, Shape(S32, {4}),
                                         {Vec<int32_t>({1, 2, 3}), Lit<int32_t>({}, {0})},
                                         {PaddingAttr({{-1, 2, 0}})}));
  EXPECT_THAT(Values<int32_t>(t), ElementsAre(2, 3, 0, 0));
  // Everything cropped away except padding.
  ASSERT_OK_AND_ASSIGN(Literal u, h_.Run(Opcode::kPad, Shape(S32, {2}),
                                         {Vec<int32_t>({1, 2, 3}), Lit<int32_t>({}, {7})},
                                         {PaddingAttr({{-5, 4, 0}})}));
  EXPECT_THAT(Values<int32_t>(u), ElementsAre(7, 7));
}

TEST_F(ShapeOpsTest, PadTwoDimensionsAndEmpty) {
  // [[1,2],[3,4]] with low 1 on dim 0 and interior 1 on dim 1.
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kPad, Shape(F32, {3, 3}),
                                         {Lit<float>({2, 2}, {1, 2, 3, 4}), Lit<float>({}, {0})},
                                         {PaddingAttr({{1, 0, 0}, {0, 0, 1}})}));
  EXPECT_THAT(Values<float>(r), ElementsAre(0, 0, 0, 1, 0, 2, 3, 0, 4));
  ASSERT_OK_AND_ASSIGN(Literal e, h_.Run(Opcode::kPad, Shape(F32, {2}),
                                         {Vec<float>({}), Lit<float>({}, {5})},
                                         {PaddingAttr({{1, 1, 3}})}));
  EXPECT_THAT(Values<float>(e), ElementsAre(5, 5));
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kPad, Shape(F32, {}),
                                         {Lit<float>({}, {3}), Lit<float>({}, {5})},
                                         {PaddingAttr({})}));
  EXPECT_THAT(Values<float>(s), ElementsAre(3));
  // Two-element entries mean no interior padding.
  ASSERT_OK_AND_ASSIGN(Literal two, h_.Run(Opcode::kPad, Shape(F32, {3}),
                                           {Vec<float>({1}), Lit<float>({}, {0})},
                                           {PaddingAttr({{1, 1}})}));
  EXPECT_THAT(Values<float>(two), ElementsAre(0, 1, 0));
}

TEST_F(ShapeOpsTest, PadRejectsBadPadding) {
  const Shape v(F32, {3});
  const Shape zero(F32, {});
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero}, {PaddingAttr({{-2, -2, 0}})}),
              InvalidWith("gives negative size -1"));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero}, {PaddingAttr({{0, 0, -1}})}),
              InvalidWith("interior padding -1 in dimension 0 must not be negative"));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero}, {PaddingAttr({{0, 0}, {0, 0}})}),
              InvalidWith("has 2 padding entries for rank-1 operand"));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero}, {PaddingAttr({{kBig, kBig, 0}})}),
              InvalidWith("too large"));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero},
                    {PaddingAttr({{std::numeric_limits<int64_t>::min(), kBig, 0}})}),
              InvalidWith("too large"));
  // Interior padding within bounds but a product beyond the element limit.
  EXPECT_THAT(Infer(Opcode::kPad, v, {Shape(F32, {int64_t{1} << 30}), zero},
                    {PaddingAttr({{0, 0, int64_t{1} << 39}})}),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, Shape(S32, {})}, {PaddingAttr({{0, 0, 0}})}),
              InvalidWith("padding value must be a f32 scalar, got s32[]"));
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, Shape(F32, {1})}, {PaddingAttr({{0, 0, 0}})}),
              InvalidWith("padding value"));
  // (Entries with fewer than two numbers are not tested here: the printer used
  // in error messages indexes the first two, and the parser never makes them.)
  EXPECT_THAT(Infer(Opcode::kPad, v, {v, zero}, {PaddingAttr({{0, 0, 0, 0}})}),
              InvalidWith("padding entry 0"));
}

// ---------------------------------------------------------------------------
// reverse

TEST_F(ShapeOpsTest, ReverseDimensions) {
  const Literal m = Lit<int32_t>({2, 3}, Iota(6));
  ASSERT_OK_AND_ASSIGN(Literal a, h_.Run(Opcode::kReverse, Shape(S32, {2, 3}), {m}, {Dims({0})}));
  EXPECT_THAT(Values<int32_t>(a), ElementsAre(3, 4, 5, 0, 1, 2));
  ASSERT_OK_AND_ASSIGN(Literal b, h_.Run(Opcode::kReverse, Shape(S32, {2, 3}), {m}, {Dims({1})}));
  EXPECT_THAT(Values<int32_t>(b), ElementsAre(2, 1, 0, 5, 4, 3));
  ASSERT_OK_AND_ASSIGN(Literal c, h_.Run(Opcode::kReverse, Shape(S32, {2, 3}), {m}, {Dims({1, 0})}));
  EXPECT_THAT(Values<int32_t>(c), ElementsAre(5, 4, 3, 2, 1, 0));
  ASSERT_OK_AND_ASSIGN(Literal e, h_.Run(Opcode::kReverse, Shape(S32, {0, 3}),
                                         {Literal(Shape(S32, {0, 3}))}, {Dims({0})}));
  EXPECT_EQ(e.num_elements(), 0);
  EXPECT_THAT(Infer(Opcode::kReverse, Shape(S32, {2, 3}), {Shape(S32, {2, 3})}, {Dims({1, 1})}),
              InvalidWith("appears twice"));
  EXPECT_THAT(Infer(Opcode::kReverse, Shape(S32, {2, 3}), {Shape(S32, {2, 3})}, {Dims({2})}),
              InvalidWith("out of range"));
}

// ---------------------------------------------------------------------------
// Every dtype moves bit-exactly (NaN payloads, f16, pred, 64-bit).

TEST_F(ShapeOpsTest, DataMovementIsBitExactForAllTypes) {
  int count = 0;
  const PrimitiveType* types = AllArrayTypes(&count);
  for (int t = 0; t < count; ++t) {
    Literal in(Shape(types[t], {2, 2}));
    for (int64_t i = 0; i < 4; ++i) in.SetFromInt64(i, i % 2 == 0 ? 1 : 0);
    ASSERT_OK_AND_ASSIGN(Literal tr, h_.Run(Opcode::kTranspose, Shape(types[t], {2, 2}), {in},
                                            {Dims({1, 0})}));
    ASSERT_OK_AND_ASSIGN(Literal back, h_.Run(Opcode::kTranspose, Shape(types[t], {2, 2}), {tr},
                                              {Dims({1, 0})}));
    EXPECT_EQ(back, in) << in.shape().ToString();
    ASSERT_OK_AND_ASSIGN(Literal rev, h_.Run(Opcode::kReverse, Shape(types[t], {2, 2}), {in},
                                             {Dims({0, 1})}));
    EXPECT_EQ(rev.GetAsInt64(0), 0);
    EXPECT_EQ(rev.GetAsInt64(3), 1);
  }
  // A signalling-NaN payload survives a slice untouched.
  Literal nan(Shape(F32, {2}));
  const uint32_t bits = 0x7fa00001u;
  std::memcpy(nan.untyped_data() + 4, &bits, 4);
  ASSERT_OK_AND_ASSIGN(Literal s, h_.Run(Opcode::kSlice, Shape(F32, {1}), {nan},
                                         {SliceAttr({{1, 2, 1}})}));
  uint32_t out_bits;
  std::memcpy(&out_bits, s.untyped_data(), 4);
  EXPECT_EQ(out_bits, bits);
  ASSERT_OK_AND_ASSIGN(Literal p, h_.Run(Opcode::kPad, Shape(F16, {3}),
                                         {Vec<Half>({Half(1.5f)}), Lit<Half>({}, {Half(-2.0f)})},
                                         {PaddingAttr({{1, 1, 0}})}));
  EXPECT_EQ(static_cast<float>(p.data<Half>()[0]), -2.0f);
  EXPECT_EQ(static_cast<float>(p.data<Half>()[1]), 1.5f);
  ASSERT_OK_AND_ASSIGN(Literal pb, h_.Run(Opcode::kBroadcast, Shape(PRED, {2, 2}),
                                          {Preds({2}, {true, false})}, {Dims({1})}));
  EXPECT_THAT(Values<bool>(pb), ElementsAre(true, false, true, false));
}

TEST_F(ShapeOpsTest, EvaluateRejectsValuesThatDoNotMatchOperands) {
  Instruction* inst = h_.OpOn(Opcode::kReverse, Shape(S32, {3}), {Shape(S32, {3})}, {Dims({0})});
  EXPECT_THAT(h_.Eval(inst, {Vec<int32_t>({1, 2})}), InvalidWith("does not have the operand's shape"));
  EXPECT_THAT(h_.Eval(inst, {}), InvalidWith("operand values"));
}

TEST_F(ShapeOpsTest, LargeTransposeIsFast) {
  Literal in = Lit<int32_t>({1000, 1000}, std::vector<int32_t>(1000000, 1));
  ASSERT_OK_AND_ASSIGN(Literal r, h_.Run(Opcode::kTranspose, Shape(S32, {1000, 1000}), {in},
                                         {Dims({1, 0})}));
  EXPECT_EQ(r.num_elements(), 1000000);
}

// The same ops through the text format: the parser hands over attributes in
// the representations the op definitions expect, the verifier accepts the
// inferred shapes, and the printer reproduces the text.
TEST_F(ShapeOpsTest, ParsedProgramVerifiesEvaluatesAndRoundTrips) {
  constexpr char kText[] = R"(HloModule shapes

ENTRY %main (p: s32[2,3]) -> s32[3,4] {
  %p = s32[2,3] parameter(0)
  %t = s32[3,2] transpose(%p), dimensions={1,0}
  %zero = s32[] constant(0)
  %padded = s32[3,4] pad(%t, %zero), padding=0_0x1_0_1
  %rev = s32[3,4] reverse(%padded), dimensions={0}
  %s = s32[3,2] slice(%rev), slice={[0:3], [0:4:2]}
  %i = s32[] constant(1)
  %ds = s32[3,2] dynamic-slice(%rev, %zero, %i), dynamic_slice_sizes={3,2}
  %c = s32[3,4] concatenate(%s, %ds), dimensions={1}
  %b = s32[3,4] broadcast(%zero), dimensions={}
  %lt = pred[3,4] compare(%c, %b), direction=GT
  ROOT %sel = s32[3,4] select(%lt, %c, %b)
}
)";
  ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(auto reparsed, ParseAndVerifyModule(module->ToString()));
  EXPECT_EQ(reparsed->ToString(), module->ToString());
  ASSERT_OK_AND_ASSIGN(Literal r, Evaluate(*module, {Lit<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})}));
  // t = [[1,4],[2,5],[3,6]]; padded rows [0,a,0,b]; reversed rows;
  // s takes columns 0,2 -> [0,0] per row; ds takes columns 1..2 -> [a,0].
  EXPECT_THAT(Values<int32_t>(r), ElementsAre(0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0));
}

}  // namespace
}  // namespace sharc::hlo
