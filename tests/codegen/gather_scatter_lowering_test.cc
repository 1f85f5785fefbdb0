// gather and scatter as Halide kernels against the interpreter, for every
// dtype: clamped gather starts, skipped out-of-bounds scatter updates,
// duplicates (add accumulates, overwrite keeps the last in the updates'
// row-major order), a composite combiner, batching dims, u64 indices beyond
// int64, empty updates.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "codegen/fusion.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using hlo::PrimitiveType;
using testing_util::AllTypes;
using testing_util::ForType;

// Indices are small (mostly in range, some negative or past the end) except
// the u64 ones, which also take huge values.
std::vector<hlo::Literal> IndexArgs(const hlo::Module& module, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<hlo::Literal> args;
  for (const hlo::Instruction* p : module.entry()->parameters()) {
    const PrimitiveType t = p->shape().type();
    const bool index = t == PrimitiveType::kS32 || t == PrimitiveType::kS64;
    args.push_back(testing_util::RandomLiteral(p->shape(), rng, -3, 3, index));
  }
  return args;
}

constexpr const char* kGather = R"(
HloModule gather
ENTRY main {
  a = T[5,7,3] parameter(0)
  i = s32[4,2] parameter(1)
  j = s64[6] parameter(2)
  k = s32[5,4,1] parameter(3)
  h = u64[6] parameter(4)
  e = s32[0,2] parameter(5)
  g0 = T[4,2,3] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,3}
  g1 = T[6,7,3] gather(a, j), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,7,3}
  g2 = T[5,4,3] gather(a, k), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,3}
  g3 = T[6,2,3] gather(a, h), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={1}, index_vector_dim=1, slice_sizes={1,2,3}
  g4 = T[0,2,3] gather(a, e), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,3}
  ROOT out = (T[4,2,3], T[6,7,3], T[5,4,3], T[6,2,3], T[0,2,3]) tuple(g0, g1, g2, g3, g4)
}
)";

constexpr const char* kScatter = R"(
HloModule scatter
acc { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] OPA(x, y) }
max { x = T[] parameter(0)  y = T[] parameter(1)  ROOT r = T[] maximum(x, y) }
overwrite { x = T[] parameter(0)  ROOT y = T[] parameter(1) }
composite { x = T[] parameter(0)  y = T[] parameter(1)  s = T[] OPA(x, y)  ROOT m = T[] maximum(s, y) }
ENTRY main {
  a = T[5,7,3] parameter(0)
  i = s32[4,2] parameter(1)
  u0 = T[4,2,3] parameter(2)
  j = s64[6] parameter(3)
  u1 = T[6,7,3] parameter(4)
  k = s32[5,4,1] parameter(5)
  u2 = T[5,4,3] parameter(6)
  h = u64[6] parameter(7)
  u3 = T[6,2,3] parameter(8)
  e = s32[0,2] parameter(9)
  u4 = T[0,2,3] parameter(10)
  s0 = T[5,7,3] scatter(a, i, u0), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=acc
  s1 = T[5,7,3] scatter(a, j, u1), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=overwrite
  s2 = T[5,7,3] scatter(a, k, u2), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=max
  s3 = T[5,7,3] scatter(a, h, u3), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=1, to_apply=overwrite
  s4 = T[5,7,3] scatter(a, e, u4), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=acc
  s5 = T[5,7,3] scatter(a, j, u1), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=acc
  s6 = T[5,7,3] scatter(a, i, u0), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=composite
  ROOT out = (T[5,7,3], T[5,7,3], T[5,7,3], T[5,7,3], T[5,7,3], T[5,7,3], T[5,7,3]) tuple(s0, s1, s2, s3, s4, s5, s6)
}
)";

class GatherScatterTest : public ::testing::TestWithParam<PrimitiveType> {};

TEST_P(GatherScatterTest, GatherEqualsInterpreter) {
  const std::string text = ForType(kGather, GetParam());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  for (uint64_t seed : {1, 2}) {
    std::vector<hlo::Literal> args = IndexArgs(*module, seed);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "gather")) << text;
  }
}

TEST_P(GatherScatterTest, ScatterEqualsInterpreter) {
  const std::string text = ForType(kScatter, GetParam());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(text));
  for (uint64_t seed : {3, 4}) {
    std::vector<hlo::Literal> args = IndexArgs(*module, seed);
    ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
    ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
    EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "scatter")) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GatherScatterTest, ::testing::ValuesIn(AllTypes()),
                         [](const auto& info) { return hlo::PrimitiveTypeName(info.param); });

// The shape of an embedding lookup and its gradient: a gather whose
// derivative is a scatter-add, fused with their neighbours and run through
// the Executable with Halide kernels only.
TEST(GatherScatterTest, EmbeddingAndItsGradientRunOnHalide) {
  constexpr const char* kText = R"(
HloModule embedding
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  table = f32[50,33] parameter(0)
  ids = s32[17] parameter(1)
  dy = f32[17,33] parameter(2)
  rows = f32[17,33] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,33}
  act = f32[17,33] tanh(rows)
  g = f32[17,33] multiply(dy, act)
  zero = f32[] constant(0)
  z = f32[50,33] broadcast(zero), dimensions={}
  grad = f32[50,33] scatter(z, ids, g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT out = (f32[17,33], f32[50,33]) tuple(act, grad)
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  std::mt19937_64 rng(5);
  std::vector<hlo::Literal> args;
  args.push_back(testing_util::RandomLiteral(module->entry()->parameter(0)->shape(), rng));
  hlo::Literal ids(module->entry()->parameter(1)->shape());
  for (int64_t i = 0; i < ids.num_elements(); ++i) ids.SetFromInt64(i, static_cast<int64_t>(rng() % 60) - 5);
  args.push_back(std::move(ids));
  args.push_back(testing_util::RandomLiteral(module->entry()->parameter(2)->shape(), rng));
  ASSERT_OK(CheckHalideSupports(*module));
  std::unique_ptr<hlo::Module> fused = module->Clone();
  ASSERT_OK(FuseModule(*fused).status());
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunWithHalideFactory(*fused, args));
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 1e-6, 1e-6, "embedding"));
}

// A scatter-add of whole rows (an embedding's gradient) updates each row's
// elements as vectors: they are distinct elements of one row, added in the
// interpreter's order row after row (duplicate ids included, as above).
TEST(GatherScatterTest, RowScattersUpdateWholeVectors) {
  constexpr const char* kText = R"(
HloModule rows
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  z = f32[100,256] parameter(0)
  ids = s32[64] parameter(1)
  dy = f32[64,256] parameter(2)
  ROOT grad = f32[100,256] scatter(z, ids, dy), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  ASSERT_OK_AND_ASSIGN(const std::string nest, testing_util::LoopNestOfEntry(*module));
  // The update adds a vector of dy to a vector of the state.
  EXPECT_THAT(nest, ::testing::ContainsRegex(
                        "scatter_grad_[0-9]+\\[ramp\\([^\n]*= [^\n]*scatter_grad_[0-9]+\\[ramp\\("
                        "[^\n]*in2\\[ramp\\("))
      << nest.substr(0, 4000);
  std::mt19937_64 rng(9);
  std::vector<hlo::Literal> args;
  args.push_back(testing_util::RandomLiteral(module->entry()->parameter(0)->shape(), rng));
  hlo::Literal ids(module->entry()->parameter(1)->shape());
  for (int64_t i = 0; i < ids.num_elements(); ++i) ids.SetFromInt64(i, static_cast<int64_t>(rng() % 8));
  args.push_back(std::move(ids));
  args.push_back(testing_util::RandomLiteral(module->entry()->parameter(2)->shape(), rng));
  ASSERT_OK_AND_ASSIGN(hlo::Literal expected, hlo::Evaluate(*module, args));
  ASSERT_OK_AND_ASSIGN(hlo::Literal actual, testing_util::RunAsOneKernel(*module, args));
  // The same additions in the same order: the same bits.
  EXPECT_TRUE(testing_util::LiteralsMatch(expected, actual, 0, 0, "row scatter"));
}

TEST(GatherScatterTest, UnsupportedScattersAreRefusedWithAReason) {
  constexpr const char* kText = R"(
HloModule variadic
neg { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
same { p = f32[] parameter(0)  ROOT c = f32[] copy(p) }
pair { a = f32[] parameter(0)  b = s32[] parameter(1)  c = f32[] parameter(2)  d = s32[] parameter(3)
       lt = pred[] compare(a, c), direction=LT
       x = f32[] conditional(lt, a, c), true_computation=neg, false_computation=same
       y = s32[] add(b, d)  ROOT r = (f32[], s32[]) tuple(x, y) }
ENTRY main {
  a = f32[5] parameter(0)
  b = s32[5] parameter(1)
  i = s32[2,1] parameter(2)
  u = f32[2] parameter(3)
  v = s32[2] parameter(4)
  ROOT s = (f32[5], s32[5]) scatter(a, b, i, u, v), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair
}
)";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<hlo::Module> module, hlo::ParseAndVerifyModule(kText));
  absl::Status s = CheckHalideSupports(*module);
  ASSERT_FALSE(s.ok());
  // Variadic scatter lowers, and so does a combiner that calls another
  // computation (general_window_scatter_test.cc); one that branches does not.
  EXPECT_NE(std::string(s.message()).find("uses conditional"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("scatter("), std::string::npos) << s;
}

}  // namespace
}  // namespace sharc::codegen
