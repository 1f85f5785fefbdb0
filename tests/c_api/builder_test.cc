// Building modules op by op through the C API: the result is the module one
// would write by hand, errors come from the call that makes the mistake.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "tests/c_api/c_api_test_util.h"

namespace sharc::c_api_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Owned<sharc_builder> NewBuilder(const char* name) {
  sharc_builder* builder = nullptr;
  Owned<sharc_error> error(sharc_builder_create(name, &builder));
  EXPECT_EQ(error, nullptr);
  return Owned<sharc_builder>(builder);
}

// An MLP layer, tanh(x @ w + broadcast(b)), summed over its rows.
TEST(CApiBuilder, BuildsTheModuleOneWouldWrite) {
  Owned<sharc_builder> b = NewBuilder("layer");
  const int64_t x_dims[] = {8, 16}, w_dims[] = {16, 4}, b_dims[] = {4}, out_dims[] = {8, 4};
  sharc_value x, w, bias, dot, bias_rows, sum, act, rows;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_F32, 2, x_dims, &x));
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "w", SHARC_DTYPE_F32, 2, w_dims, &w));
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), nullptr, SHARC_DTYPE_F32, 1, b_dims, &bias));
  const int64_t lhs_contracting[] = {1}, rhs_contracting[] = {0};
  SHARC_ASSERT_OK(sharc_builder_dot(b.get(), x, w, lhs_contracting, rhs_contracting, 1, nullptr,
                                    nullptr, 0, &dot));
  const int64_t bias_dim[] = {1};
  SHARC_ASSERT_OK(sharc_builder_broadcast(b.get(), bias, 2, out_dims, bias_dim, &bias_rows));
  SHARC_ASSERT_OK(sharc_builder_binary(b.get(), "add", dot, bias_rows, &sum));
  SHARC_ASSERT_OK(sharc_builder_unary(b.get(), "tanh", sum, &act));
  const int64_t reduce_dims[] = {1};
  SHARC_ASSERT_OK(sharc_builder_reduce_sum(b.get(), act, reduce_dims, 1, &rows));
  SHARC_ASSERT_OK(sharc_builder_set_mesh(b.get(), "batch=2"));
  SHARC_ASSERT_OK(sharc_builder_set_sharding(b.get(), x, "P(batch, None)"));
  SHARC_ASSERT_OK(sharc_builder_set_sharding(b.get(), w, "{replicated}"));

  sharc_dtype dtype;
  int32_t rank;
  int64_t dims[2];
  SHARC_ASSERT_OK(sharc_builder_value_shape(b.get(), rows, &dtype, &rank, dims, 2));
  EXPECT_EQ(dtype, SHARC_DTYPE_F32);
  ASSERT_EQ(rank, 1);
  EXPECT_EQ(dims[0], 8);
  const char* name = nullptr;
  SHARC_ASSERT_OK(sharc_builder_value_name(b.get(), bias, &name));
  EXPECT_STREQ(name, "p2");

  const sharc_value outputs[] = {act, rows};
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), outputs, 2, &raw));
  Owned<sharc_module> built(raw);

  const std::string expected = R"(HloModule layer, num_partitions=2, mesh={batch=2}

%sharc.add.f32 {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[8,16] parameter(0), sharding={devices=[2,1]0,1}
  %w = f32[16,4] parameter(1), sharding={replicated}
  %p2 = f32[4] parameter(2)
  %dot.3 = f32[8,4] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %broadcast.4 = f32[8,4] broadcast(%p2), dimensions={1}
  %add.5 = f32[8,4] add(%dot.3, %broadcast.4)
  %tanh.6 = f32[8,4] tanh(%add.5)
  %zero.7 = f32[] constant(0)
  %reduce.8 = f32[8] reduce(%tanh.6, %zero.7), dimensions={1}, to_apply=%sharc.add.f32
  ROOT %tuple = (f32[8,4], f32[8]) tuple(%tanh.6, %reduce.8)
}
)";
  Owned<sharc_module> reference = ParseOrDie(expected.c_str());
  EXPECT_EQ(PrintModule(built.get()), PrintModule(reference.get()));

  // The builder is unchanged by finishing: it can go on and finish again.
  sharc_value negated;
  SHARC_ASSERT_OK(sharc_builder_unary(b.get(), "negate", rows, &negated));
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), &negated, 1, &raw));
  Owned<sharc_module> second(raw);
  EXPECT_THAT(PrintModule(second.get()), HasSubstr("ROOT %negate.9 = f32[8] negate(%reduce.8)"));
}

TEST(CApiBuilder, BuiltModuleComputesWhatItSays) {
  Owned<sharc_builder> b = NewBuilder("shapes");
  const int64_t x_dims[] = {2, 3};
  sharc_value x, t, r, c, sum;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_S32, 2, x_dims, &x));
  const int64_t perm[] = {1, 0};
  SHARC_ASSERT_OK(sharc_builder_transpose(b.get(), x, perm, 2, &t));  // [3,2]
  const int64_t flat[] = {6};
  SHARC_ASSERT_OK(sharc_builder_reshape(b.get(), t, 1, flat, &r));
  const int32_t ten[] = {10, 20, 30, 40, 50, 60};
  const sharc_array constant = {SHARC_DTYPE_S32, 1, flat, ten};
  SHARC_ASSERT_OK(sharc_builder_constant(b.get(), &constant, &c));
  SHARC_ASSERT_OK(sharc_builder_binary(b.get(), "add", r, c, &sum));
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), &sum, 1, &raw));
  Owned<sharc_module> built(raw);

  // Run the printed module through the reference interpreter.
  absl::StatusOr<std::unique_ptr<hlo::Module>> module =
      hlo::ParseAndVerifyModule(PrintModule(built.get()));
  ASSERT_TRUE(module.ok()) << module.status();
  const std::vector<int32_t> values = {1, 2, 3, 4, 5, 6};  // [[1,2,3],[4,5,6]]
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::FromValues<int32_t>({2, 3}, values));
  absl::StatusOr<hlo::Literal> result = hlo::Evaluate(**module, args);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<int32_t> expected = {11, 24, 32, 45, 53, 66};  // transposed, plus 10..60
  EXPECT_EQ(*result, hlo::Literal::FromValues<int32_t>({6}, expected));
}

TEST(CApiBuilder, AddsAnyOpFromOneLineOfText) {
  Owned<sharc_builder> b = NewBuilder("text");
  const int64_t dims[] = {4, 4};
  sharc_value x, s, m, cmp;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_F32, 2, dims, &x));
  SHARC_ASSERT_OK(
      sharc_builder_instruction(b.get(), "%s = f32[2,4] slice(%x), slice={[0:2], [0:4]}", &s));
  const int64_t all[] = {0, 1};
  SHARC_ASSERT_OK(sharc_builder_reduce_sum(b.get(), s, all, 2, &m));
  // A called computation the builder made, and a sharding.
  SHARC_ASSERT_OK(sharc_builder_instruction(
      b.get(),
      "%rowmax = f32[4] reduce(%x, %zero.2), dimensions={1}, to_apply=%sharc.add.f32, "
      "sharding={replicated}",
      &cmp));
  const sharc_value outputs[] = {m, cmp};
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), outputs, 2, &raw));
  Owned<sharc_module> built(raw);
  const std::string printed = PrintModule(built.get());
  EXPECT_THAT(printed, HasSubstr("%s = f32[2,4] slice(%x), slice={[0:2], [0:4]}"));
  EXPECT_THAT(printed, HasSubstr("%rowmax = f32[4] reduce(%x, %zero.2), dimensions={1}, "
                                 "to_apply=%sharc.add.f32, sharding={replicated}"));
}

TEST(CApiBuilder, ConvertsBroadcastsScalarsAndCompares) {
  Owned<sharc_builder> b = NewBuilder("mixed");
  const int64_t dims[] = {3};
  sharc_value x, half, halves, halved, wide, lt;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_S32, 1, dims, &x));
  const float one_half = 0.5f;
  const sharc_array scalar = {SHARC_DTYPE_F32, 0, nullptr, &one_half};
  SHARC_ASSERT_OK(sharc_builder_constant(b.get(), &scalar, &half));
  SHARC_ASSERT_OK(sharc_builder_broadcast(b.get(), half, 1, dims, nullptr, &halves));
  SHARC_ASSERT_OK(sharc_builder_convert(b.get(), x, SHARC_DTYPE_F32, &wide));
  SHARC_ASSERT_OK(sharc_builder_binary(b.get(), "multiply", wide, halves, &halved));
  const char* halved_name = nullptr;
  SHARC_ASSERT_OK(sharc_builder_value_name(b.get(), halved, &halved_name));
  const std::string line = std::string("%lt = pred[3] compare(%") + halved_name +
                           ", %broadcast.2), direction=LT";
  SHARC_ASSERT_OK(sharc_builder_instruction(b.get(), line.c_str(), &lt));
  const sharc_value outputs[] = {halved, lt};
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), outputs, 2, &raw));
  Owned<sharc_module> built(raw);

  absl::StatusOr<std::unique_ptr<hlo::Module>> module =
      hlo::ParseAndVerifyModule(PrintModule(built.get()));
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<hlo::Literal> args;
  args.push_back(hlo::Literal::FromValues<int32_t>({3}, std::vector<int32_t>{-1, 1, 3}));
  absl::StatusOr<hlo::Literal> result = hlo::Evaluate(**module, args);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->is_tuple());
  EXPECT_EQ(result->element(0),
            hlo::Literal::FromValues<float>({3}, std::vector<float>{-0.5f, 0.5f, 1.5f}));
  const bool less[] = {true, false, false};
  EXPECT_EQ(result->element(1), hlo::Literal::FromValues<bool>({3}, less));
}

TEST(CApiBuilder, TextErrorsPointIntoTheLine) {
  Owned<sharc_builder> b = NewBuilder("text");
  const int64_t dims[] = {4};
  sharc_value x, out;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_F32, 1, dims, &x));
  std::string message = Message(sharc_builder_instruction(b.get(), "%y = f32[4] add(%x, %q)", &out));
  EXPECT_THAT(message, StartsWith("sharc_builder_instruction: <instruction>:1:21: error: use of "
                                  "undefined value '%q'"));
  EXPECT_THAT(message, HasSubstr("%y = f32[4] add(%x, %q)\n                    ^"));
  // Cut short: the error points just past the end of the line.
  message = Message(sharc_builder_instruction(b.get(), "%y = f32[4] negate(%x", &out));
  EXPECT_THAT(message, StartsWith("sharc_builder_instruction: <instruction>:1:22: error: expected"));
  // Shapes are checked as the verifier does.
  message = Message(sharc_builder_instruction(b.get(), "%y = f32[5] negate(%x)", &out));
  EXPECT_THAT(message, AllOf(HasSubstr("negate declares f32[5]"), HasSubstr("<instruction>:1:1")));
  EXPECT_THAT(Message(sharc_builder_instruction(b.get(), "%p = f32[] parameter(0)", &out)),
              HasSubstr("sharc_builder_parameter"));
  EXPECT_THAT(Message(sharc_builder_instruction(b.get(), "%a = f32[4] negate(%x)\n%b = f32[4] "
                                                         "negate(%a)", &out)),
              HasSubstr("one line"));
  // A failed line leaves the builder as it was.
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), &x, 1, &raw));
  sharc_module_free(raw);
}

TEST(CApiBuilder, OpErrorsNameTheCallAndTheShapes) {
  Owned<sharc_builder> b = NewBuilder(nullptr);
  const int64_t four[] = {4}, five[] = {5};
  sharc_value x, y, out;
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_F32, 1, four, &x));
  SHARC_ASSERT_OK(sharc_builder_parameter(b.get(), "y", SHARC_DTYPE_F32, 1, five, &y));
  EXPECT_THAT(Message(sharc_builder_binary(b.get(), "add", x, y, &out)),
              AllOf(StartsWith("sharc_builder_binary: "), HasSubstr("f32[5]")));
  EXPECT_THAT(Message(sharc_builder_binary(b.get(), "tanh", x, x, &out)),
              HasSubstr("'tanh' is not an elementwise op of 2 operand(s)"));
  EXPECT_THAT(Message(sharc_builder_unary(b.get(), "frobnicate", x, &out)),
              HasSubstr("unknown op 'frobnicate'"));
  EXPECT_THAT(Message(sharc_builder_unary(b.get(), "negate", 42, &out)),
              HasSubstr("operand (value 42) is not a value of this builder"));
  EXPECT_THAT(Message(sharc_builder_parameter(b.get(), "x", SHARC_DTYPE_F32, 1, four, &out)),
              HasSubstr("the name 'x' is already used"));
  const int64_t negative[] = {-3};
  EXPECT_THAT(Message(sharc_builder_parameter(b.get(), "z", SHARC_DTYPE_F32, 1, negative, &out)),
              HasSubstr("parameter 'z'"));
  const int64_t bad_dim[] = {3};
  EXPECT_THAT(Message(sharc_builder_reduce_sum(b.get(), x, bad_dim, 1, &out)),
              StartsWith("sharc_builder_reduce_sum: "));
  const int64_t six[] = {6};
  EXPECT_THAT(Message(sharc_builder_reshape(b.get(), x, 1, six, &out)),
              StartsWith("sharc_builder_reshape: "));
  EXPECT_THAT(Message(sharc_builder_finish(b.get(), &x, 0, nullptr)), HasSubstr("out is NULL"));
  sharc_module* raw = nullptr;
  EXPECT_THAT(Message(sharc_builder_finish(b.get(), &x, 0, &raw)),
              HasSubstr("at least one output"));
  // After all those refusals the builder still finishes into a valid module.
  SHARC_ASSERT_OK(sharc_builder_finish(b.get(), &x, 1, &raw));
  Owned<sharc_module> built(raw);
  EXPECT_THAT(PrintModule(built.get()), HasSubstr("ROOT %x = f32[4] parameter(0)"));
}

}  // namespace
}  // namespace sharc::c_api_test
