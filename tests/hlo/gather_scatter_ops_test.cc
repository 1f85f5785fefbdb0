// gather and scatter: XLA's documented examples, clamping / skipping of
// out-of-bounds indices, batching dims, variadic scatter, and errors.
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

struct GatherDims {
  IntList offset_dims, collapsed, start_index_map;
  int64_t index_vector_dim;
  IntList slice_sizes;
  IntList operand_batching = {}, indices_batching = {};
};

std::vector<Attribute> GatherAttrs(const GatherDims& g) {
  std::vector<Attribute> attrs = {{"offset_dims", g.offset_dims},
                                  {"collapsed_slice_dims", g.collapsed},
                                  {"start_index_map", g.start_index_map},
                                  {"index_vector_dim", g.index_vector_dim},
                                  {"slice_sizes", g.slice_sizes}};
  if (!g.operand_batching.empty()) {
    attrs.push_back({"operand_batching_dims", g.operand_batching});
    attrs.push_back({"start_indices_batching_dims", g.indices_batching});
  }
  return attrs;
}

Literal Matrix3x3() { return Values<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}); }

TEST(GatherTest, RowsWithImplicitIndexVectorDim) {
  OpTestModule t;
  Instruction* op = t.Param(F32({3, 3}));
  Instruction* idx = t.Param(S32({2}));
  Instruction* g = t.AddInferred(Opcode::kGather, {op, idx},
                                 GatherAttrs({{1}, {0}, {0}, /*index_vector_dim=*/1, {1, 3}}));
  EXPECT_EQ(g->shape(), F32({2, 3}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*g, {Matrix3x3(), Values<int32_t>({2}, {0, 2})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(1, 2, 3, 7, 8, 9));
  // Start indices are clamped so the slice stays inside the operand.
  ASSERT_OK_AND_ASSIGN(Literal clamped, t.Eval(*g, {Matrix3x3(), Values<int32_t>({2}, {5, -4})}));
  EXPECT_THAT(ToVector<float>(clamped), ElementsAre(7, 8, 9, 1, 2, 3));
}

TEST(GatherTest, TwoDimensionalSlices) {
  // Two 2x2 windows starting at (0,0) and (1,1); the batch dim goes first.
  OpTestModule t;
  Instruction* op = t.Param(F32({3, 3}));
  Instruction* idx = t.Param(S32({2, 2}));
  Instruction* g =
      t.AddInferred(Opcode::kGather, {op, idx}, GatherAttrs({{1, 2}, {}, {0, 1}, 1, {2, 2}}));
  EXPECT_EQ(g->shape(), F32({2, 2, 2}));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*g, {Matrix3x3(), Values<int32_t>({2, 2}, {0, 0, 1, 1})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(1, 2, 4, 5, 5, 6, 8, 9));
  // Offset dims may sit before the batch dim; index_vector_dim may be 0.
  Instruction* idx_t = t.Param(S32({2, 2}));
  Instruction* g2 =
      t.AddInferred(Opcode::kGather, {op, idx_t}, GatherAttrs({{0, 1}, {}, {0, 1}, 0, {2, 2}}));
  EXPECT_EQ(g2->shape(), F32({2, 2, 2}));
  // Columns are index vectors: (0,0) and (1,1).
  ASSERT_OK_AND_ASSIGN(Literal out2,
                       t.Eval(*g2, {Matrix3x3(), Values<int32_t>({2, 2}, {0, 1, 0, 1})}));
  // out2[i][j][b] = window_b[i][j].
  EXPECT_THAT(ToVector<float>(out2), ElementsAre(1, 5, 2, 6, 4, 8, 5, 9));
}

TEST(GatherTest, BatchingDims) {
  // out[b] = operand[b, indices[b]].
  OpTestModule t;
  Instruction* op = t.Param(F32({2, 3}));
  Instruction* idx = t.Param(S32({2, 1}));
  GatherDims dims{{}, {1}, {1}, 1, {1, 1}, {0}, {0}};
  Instruction* g = t.AddInferred(Opcode::kGather, {op, idx}, GatherAttrs(dims));
  EXPECT_EQ(g->shape(), F32({2}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*g, {Values<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                                Values<int32_t>({2, 1}, {2, 0})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(3, 4));
}

TEST(GatherTest, RejectsBadDimensionNumbers) {
  OpTestModule t;
  Instruction* op = t.Param(F32({3, 3}));
  Instruction* idx = t.Param(S32({2}));
  Instruction* fidx = t.Param(F32({2}));
  auto infer = [&](Instruction* indices, GatherDims dims) {
    return t.Infer(*t.Add(Opcode::kGather, {op, indices}, GatherAttrs(dims))).status();
  };
  auto invalid = [](const char* text) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(text));
  };
  EXPECT_THAT(infer(idx, {{1}, {0}, {0}, 1, {1, 4}}), invalid("slice size 4 of dim 1"));
  EXPECT_THAT(infer(idx, {{1}, {0}, {0}, 1, {1}}),
              invalid("1 slice_sizes for an operand of rank 2"));
  EXPECT_THAT(infer(idx, {{1}, {0}, {0}, 2, {1, 3}}), invalid("index_vector_dim 2"));
  EXPECT_THAT(infer(idx, {{1}, {0}, {0, 1}, 1, {1, 3}}), invalid("start_index_map has 2 entries"));
  EXPECT_THAT(infer(idx, {{1}, {0}, {5}, 1, {1, 3}}), invalid("out of range"));
  EXPECT_THAT(infer(idx, {{1}, {0}, {0}, 1, {2, 3}}), invalid("collapses dim 0"));
  EXPECT_THAT(infer(idx, {{}, {0}, {0}, 1, {1, 3}}), invalid("0 offset_dims"));
  EXPECT_THAT(infer(idx, {{3}, {0}, {0}, 1, {1, 3}}), invalid("out of range"));
  EXPECT_THAT(infer(idx, {{1, 0}, {}, {0}, 1, {1, 3}}), invalid("must be sorted"));
  EXPECT_THAT(infer(fidx, {{1}, {0}, {0}, 1, {1, 3}}), invalid("integer type"));
  GatherDims batching{{1}, {}, {1}, 1, {1, 1}, {0}, {1}};
  EXPECT_THAT(infer(t.Param(S32({3, 1})), batching),
              invalid("start_indices_batching_dims contains index_vector_dim 1"));
  GatherDims batch_size{{}, {1}, {1}, 1, {1, 1}, {0}, {0}};
  EXPECT_THAT(infer(t.Param(S32({2, 1})), batch_size),
              invalid("batching dim 0 of the operand has size 3 but dim 0 of the indices has "
                      "size 2"));
}

struct ScatterDims {
  IntList update_window_dims, inserted, scatter_map;
  int64_t index_vector_dim;
};

std::vector<Attribute> ScatterAttrs(const ScatterDims& s, Computation* to_apply) {
  return {{"update_window_dims", s.update_window_dims},
          {"inserted_window_dims", s.inserted},
          {"scatter_dims_to_operand_dims", s.scatter_map},
          {"index_vector_dim", s.index_vector_dim},
          {"to_apply", to_apply}};
}

TEST(ScatterTest, AddsRowsAndAccumulatesDuplicates) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
  Instruction* op = t.Param(F32({3, 3}));
  Instruction* idx = t.Param(S32({2}));
  Instruction* upd = t.Param(F32({2, 3}));
  Instruction* s =
      t.AddInferred(Opcode::kScatter, {op, idx, upd}, ScatterAttrs({{1}, {0}, {0}, 1}, add));
  EXPECT_EQ(s->shape(), F32({3, 3}));
  EXPECT_OK(t.Verify(*s));
  Literal updates = Values<float>({2, 3}, {10, 20, 30, 40, 50, 60});
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*s, {Matrix3x3(), Values<int32_t>({2}, {0, 2}), updates}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(11, 22, 33, 4, 5, 6, 47, 58, 69));
  ASSERT_OK_AND_ASSIGN(Literal dup,
                       t.Eval(*s, {Matrix3x3(), Values<int32_t>({2}, {1, 1}), updates}));
  EXPECT_THAT(ToVector<float>(dup), ElementsAre(1, 2, 3, 54, 75, 96, 7, 8, 9));
}

TEST(ScatterTest, SkipsOutOfBoundsWindows) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
  Instruction* op = t.Param(F32({4}));
  Instruction* idx = t.Param(S32({3, 1}));
  Instruction* upd = t.Param(F32({3, 2}));
  // Windows of 2 elements at starts 3 (would cross the end), -1, and 1.
  Instruction* s =
      t.AddInferred(Opcode::kScatter, {op, idx, upd}, ScatterAttrs({{1}, {}, {0}, 1}, add));
  EXPECT_EQ(s->shape(), F32({4}));
  ASSERT_OK_AND_ASSIGN(Literal out, t.Eval(*s, {Values<float>({4}, {0, 0, 0, 0}),
                                                Values<int32_t>({3, 1}, {3, -1, 1}),
                                                Values<float>({3, 2}, {1, 1, 2, 2, 5, 6})}));
  EXPECT_THAT(ToVector<float>(out), ElementsAre(0, 5, 6, 0));
}

TEST(ScatterTest, ReducerCallPathOverwrites) {
  // to_apply returns the update: plain assignment (not a fast-path op).
  OpTestModule t;
  Computation* assign = t.NewComputation("assign");
  t.Param(S32({}), assign);
  Instruction* u = t.Param(S32({}), assign);
  assign->set_root(u);
  Instruction* op = t.Param(S32({2, 2}));
  Instruction* idx = t.Param(S32({1, 2}));
  Instruction* upd = t.Param(S32({1}));
  // Scalar updates at full 2-D indices: both dims inserted.
  Instruction* s = t.AddInferred(Opcode::kScatter, {op, idx, upd},
                                 ScatterAttrs({{}, {0, 1}, {0, 1}, 1}, assign));
  EXPECT_EQ(s->shape(), S32({2, 2}));
  EXPECT_OK(t.Verify(*s));
  FakeEvalContext ctx;
  ASSERT_OK_AND_ASSIGN(
      Literal out, t.Eval(*s,
                          {Values<int32_t>({2, 2}, {1, 2, 3, 4}), Values<int32_t>({1, 2}, {1, 0}),
                           Values<int32_t>({1}, {9})},
                          &ctx));
  EXPECT_THAT(ToVector<int32_t>(out), ElementsAre(1, 2, 9, 4));
  EXPECT_EQ(ctx.calls, 1);
}

TEST(ScatterTest, Variadic) {
  OpTestModule t;
  Computation* both = t.NewComputation("both");
  Instruction* a0 = t.Param(F32({}), both);
  Instruction* a1 = t.Param(S32({}), both);
  Instruction* x0 = t.Param(F32({}), both);
  Instruction* x1 = t.Param(S32({}), both);
  Instruction* s0 = t.Add(Opcode::kAdd, {a0, x0}, {}, F32({}), both);
  Instruction* s1 = t.Add(Opcode::kMultiply, {a1, x1}, {}, S32({}), both);
  t.Add(Opcode::kTuple, {s0, s1}, {}, Shape::Tuple({F32({}), S32({})}), both);
  Instruction* op0 = t.Param(F32({3}));
  Instruction* op1 = t.Param(S32({3}));
  Instruction* idx = t.Param(S32({2}));
  Instruction* u0 = t.Param(F32({2}));
  Instruction* u1 = t.Param(S32({2}));
  Instruction* s = t.AddInferred(Opcode::kScatter, {op0, op1, idx, u0, u1},
                                 ScatterAttrs({{}, {0}, {0}, 1}, both));
  EXPECT_EQ(s->shape(), Shape::Tuple({F32({3}), S32({3})}));
  EXPECT_OK(t.Verify(*s));
  ASSERT_OK_AND_ASSIGN(Literal out,
                       t.Eval(*s, {Values<float>({3}, {1, 1, 1}), Values<int32_t>({3}, {2, 2, 2}),
                                   Values<int32_t>({2}, {2, 2}), Values<float>({2}, {5, 6}),
                                   Values<int32_t>({2}, {3, 4})}));
  EXPECT_THAT(ToVector<float>(out.element(0)), ElementsAre(1, 1, 12));
  EXPECT_THAT(ToVector<int32_t>(out.element(1)), ElementsAre(2, 2, 24));
}

TEST(ScatterTest, RejectsBadDimensionNumbers) {
  OpTestModule t;
  Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
  Computation* add_s32 = t.BinaryComputation("add_s32", Opcode::kAdd, PrimitiveType::kS32);
  Instruction* op = t.Param(F32({3, 3}));
  Instruction* idx = t.Param(S32({2}));
  auto infer = [&](Shape updates, ScatterDims dims) {
    return t.Infer(*t.Add(Opcode::kScatter, {op, idx, t.Param(updates)}, ScatterAttrs(dims, add)))
        .status();
  };
  auto invalid = [](const char* text) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(text));
  };
  EXPECT_THAT(infer(F32({2, 4}), {{1}, {0}, {0}, 1}), invalid("update window dim 1 has size 4"));
  EXPECT_THAT(infer(F32({3, 3}), {{1}, {0}, {0}, 1}), invalid("update scatter dim 0 has size 3"));
  EXPECT_THAT(infer(F32({2, 3, 1}), {{1}, {0}, {0}, 1}), invalid("updates have rank 3"));
  EXPECT_THAT(infer(F32({2, 3}), {{1}, {}, {0}, 1}), invalid("update_window_dims"));
  EXPECT_THAT(infer(S32({2, 3}), {{1}, {0}, {0}, 1}), invalid("has type s32"));
  EXPECT_THAT(infer(F32({2, 3}), {{1}, {0}, {0}, -1}), invalid("index_vector_dim -1"));
  EXPECT_THAT(infer(F32({2, 3}), {{1}, {0}, {7}, 1}), invalid("out of range"));
  Instruction* even = t.Add(Opcode::kScatter, {op, idx}, ScatterAttrs({{1}, {0}, {0}, 1}, add));
  EXPECT_THAT(t.Infer(*even), invalid("N operands, the indices and N updates"));
  Instruction* sig = t.Add(Opcode::kScatter, {op, idx, t.Param(F32({2, 3}))},
                           ScatterAttrs({{1}, {0}, {0}, 1}, add_s32));
  EXPECT_OK(t.Infer(*sig).status());
  EXPECT_THAT(t.Verify(*sig), invalid("to_apply computation 'add_s32'"));
}

// Random dimension numbers: shape inference either rejects them or the
// evaluator runs cleanly on random (often out-of-range) indices. Run under
// sanitizers, this is the "never crash on user input" check.
class RandomDims {
 public:
  explicit RandomDims(uint32_t seed) : rng_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  // Mostly a sorted subset of [0, bound); sometimes junk.
  IntList Dims(int64_t bound) {
    IntList dims;
    if (Int(0, 9) == 0) {
      for (int64_t n = Int(0, 3); n > 0; --n) dims.push_back(Int(-2, bound + 2));
      return dims;
    }
    for (int64_t d = 0; d < bound; ++d) {
      if (Int(0, 1) == 1) dims.push_back(d);
    }
    return dims;
  }
  std::vector<int64_t> ShapeDims() {
    std::vector<int64_t> dims;
    for (int64_t n = Int(0, 3); n > 0; --n) dims.push_back(Int(0, 3));
    return dims;
  }
  Literal RandomIndices(const Shape& shape) {
    Literal l(shape);
    for (int64_t i = 0; i < l.num_elements(); ++i) l.SetFromInt64(i, Int(-3, 5));
    return l;
  }

 private:
  std::mt19937 rng_;
};

TEST(GatherScatterFuzzTest, RandomDimensionNumbersNeverCrash) {
  RandomDims r(12345);
  int gathers = 0, scatters = 0;
  for (int iter = 0; iter < 12000; ++iter) {
    OpTestModule t;
    Computation* add = t.BinaryComputation("add", Opcode::kAdd, PrimitiveType::kF32);
    Shape operand_shape = F32(r.ShapeDims());
    Shape indices_shape = S32(r.ShapeDims());
    int64_t orank = operand_shape.rank(), irank = indices_shape.rank();
    Instruction* op = t.Param(operand_shape);
    Instruction* idx = t.Param(indices_shape);
    Literal operand(operand_shape);
    Literal indices = r.RandomIndices(indices_shape);

    IntList slice_sizes;
    for (int64_t d = 0; d < orank; ++d) slice_sizes.push_back(r.Int(0, operand_shape.dim(d)));
    if (r.Int(0, 9) == 0) slice_sizes.push_back(1);
    std::vector<Attribute> gather_attrs = {{"offset_dims", r.Dims(orank + irank)},
                                           {"collapsed_slice_dims", r.Dims(orank)},
                                           {"start_index_map", r.Dims(orank)},
                                           {"index_vector_dim", r.Int(-1, irank + 1)},
                                           {"slice_sizes", slice_sizes}};
    if (r.Int(0, 3) == 0) {
      gather_attrs.push_back({"operand_batching_dims", r.Dims(orank)});
      gather_attrs.push_back({"start_indices_batching_dims", r.Dims(irank)});
    }
    Instruction* g = t.Add(Opcode::kGather, {op, idx}, gather_attrs);
    absl::StatusOr<Shape> gshape = t.Infer(*g);
    if (gshape.ok()) {
      ++gathers;
      g->set_shape(*gshape);
      EXPECT_OK(t.Eval(*g, {operand, indices}).status()) << g->ToString();
    }

    Shape updates_shape = F32(r.ShapeDims());
    if (gshape.ok() && r.Int(0, 1) == 1) updates_shape = *gshape;  // often consistent
    Instruction* upd = t.Param(updates_shape);
    std::vector<Attribute> scatter_attrs = {
        {"update_window_dims", r.Dims(updates_shape.rank())},
        {"inserted_window_dims", r.Dims(orank)},
        {"scatter_dims_to_operand_dims", r.Dims(orank)},
        {"index_vector_dim", r.Int(-1, irank + 1)},
        {"to_apply", add}};
    Instruction* s = t.Add(Opcode::kScatter, {op, idx, upd}, scatter_attrs);
    absl::StatusOr<Shape> sshape = t.Infer(*s);
    if (sshape.ok()) {
      ++scatters;
      s->set_shape(*sshape);
      EXPECT_OK(t.Verify(*s));
      EXPECT_OK(t.Eval(*s, {operand, indices, Literal(updates_shape)}).status()) << s->ToString();
    }
  }
  // The generator must reach the evaluators, not only the error paths.
  EXPECT_GT(gathers, 100);
  EXPECT_GT(scatters, 50);
}

}  // namespace
}  // namespace sharc::hlo
