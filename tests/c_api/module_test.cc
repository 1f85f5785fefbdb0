// Parsing, printing and annotating modules through the C API.
#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "tests/c_api/c_api_test_util.h"

namespace sharc::c_api_test {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kMatmul[] = R"(HloModule matmul, num_partitions=2

ENTRY %main {
  %x = f32[4,6] parameter(0)
  %w = f32[6,3] parameter(1)
  ROOT %y = f32[4,3] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

TEST(CApiModule, ParseErrorNamesFileLineAndColumn) {
  const char* text = "HloModule m\n\nENTRY %main {\n  %x = f32[4] parameter(0)\n"
                     "  ROOT %y = f32[4] add(%x, %q)\n}\n";
  sharc_module* module = nullptr;
  Owned<sharc_error> error(sharc_module_parse(text, "bad.hlo", &module));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(module, nullptr);
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sharc_error_exit_code(error.get()), 1);
  const std::string message = sharc_error_message(error.get());
  EXPECT_THAT(message, StartsWith("bad.hlo:5:28: error: use of undefined value '%q'"));
  // The offending line and a caret under the fault.
  EXPECT_THAT(message, HasSubstr("  ROOT %y = f32[4] add(%x, %q)\n                           ^"));
}

TEST(CApiModule, ParseWithoutFilenameSaysInput) {
  sharc_module* module = nullptr;
  EXPECT_THAT(Message(sharc_module_parse("HloModule m\nENTRY %e { ROOT %x = f32[] bogus() }",
                                         nullptr, &module)),
              StartsWith("<input>:2:28: error: unknown opcode 'bogus'"));
}

TEST(CApiModule, VerifierErrorQuotesTheInstruction) {
  const char* text = "HloModule m\n\nENTRY %main {\n  %x = f32[4] parameter(0)\n"
                     "  ROOT %y = f32[5] negate(%x)\n}\n";
  sharc_module* module = nullptr;
  Owned<sharc_error> error(sharc_module_parse(text, "shape.hlo", &module));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(sharc_error_message(error.get()),
              AllOf(StartsWith("shape.hlo: error: "), HasSubstr("%y = f32[5] negate(%x)"),
                    HasSubstr("shape.hlo:5:8")));
}

TEST(CApiModule, MissingFileIsNotFound) {
  sharc_module* module = nullptr;
  Owned<sharc_error> error(sharc_module_parse_file("/nonexistent/dir/m.hlo", &module));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_NOT_FOUND);
  EXPECT_THAT(sharc_error_message(error.get()), HasSubstr("/nonexistent/dir/m.hlo"));
}

TEST(CApiModule, ParsesAFileAndPrintsCanonicalText) {
  const std::string path = std::string(SHARC_SOURCE_DIR) + "/examples/sharded_matmul.hlo";
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_module_parse_file(path.c_str(), &raw));
  Owned<sharc_module> module(raw);
  const std::string printed = PrintModule(module.get());
  EXPECT_THAT(printed, StartsWith("HloModule sharded_mlp_layer, num_partitions=2"));
  // Printing is a fixed point: the printed text parses back to itself.
  Owned<sharc_module> again = ParseOrDie(printed.c_str());
  EXPECT_EQ(PrintModule(again.get()), printed);
}

TEST(CApiModule, ReportsParameterShapes) {
  Owned<sharc_module> module = ParseOrDie(kMatmul);
  int64_t count = 0;
  SHARC_ASSERT_OK(sharc_module_num_parameters(module.get(), &count));
  EXPECT_EQ(count, 2);
  sharc_dtype dtype = SHARC_DTYPE_INVALID;
  int32_t rank = 0;
  int64_t dims[4] = {0, 0, 0, 0};
  SHARC_ASSERT_OK(sharc_module_parameter_shape(module.get(), 1, &dtype, &rank, dims, 4));
  EXPECT_EQ(dtype, SHARC_DTYPE_F32);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(dims[0], 6);
  EXPECT_EQ(dims[1], 3);
  Owned<sharc_error> error(sharc_module_parameter_shape(module.get(), 2, &dtype, &rank, dims, 4));
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_OUT_OF_RANGE);
  EXPECT_THAT(sharc_error_message(error.get()), HasSubstr("parameter index 2 is out of range"));
}

TEST(CApiModule, SetsShardingsAsHloText) {
  Owned<sharc_module> module = ParseOrDie(kMatmul);
  SHARC_ASSERT_OK(sharc_module_set_parameter_sharding(module.get(), 0, "{devices=[2,1]0,1}"));
  SHARC_ASSERT_OK(sharc_module_set_root_sharding(module.get(), "{replicated}"));
  const std::string printed = PrintModule(module.get());
  EXPECT_THAT(printed, HasSubstr("%x = f32[4,6] parameter(0), sharding={devices=[2,1]0,1}"));
  EXPECT_THAT(printed, HasSubstr("rhs_contracting_dims={0}, sharding={replicated}"));
}

TEST(CApiModule, SetsShardingsAsPartitionSpecsOverTheMesh) {
  Owned<sharc_module> module = ParseOrDie(kMatmul);
  SHARC_ASSERT_OK(sharc_module_set_mesh(module.get(), "batch=2,model=1"));
  SHARC_ASSERT_OK(sharc_module_set_parameter_sharding(module.get(), 0, "P(batch, None)"));
  SHARC_ASSERT_OK(sharc_module_set_root_sharding(module.get(), "P(batch)"));
  const std::string printed = PrintModule(module.get());
  EXPECT_THAT(printed, HasSubstr("mesh={batch=2, model=1}"));
  EXPECT_THAT(printed, HasSubstr("%x = f32[4,6] parameter(0), sharding={devices=[2,1]0,1}"));
}

TEST(CApiModule, ShardingErrorsNameTheValue) {
  Owned<sharc_module> module = ParseOrDie(kMatmul);
  // A partition spec without a mesh.
  EXPECT_THAT(Message(sharc_module_set_parameter_sharding(module.get(), 0, "P(batch, None)")),
              AllOf(HasSubstr("parameter 0 (%x: f32[4,6])"), HasSubstr("needs a named mesh")));
  // Rank 3 tiles on a rank 2 value.
  EXPECT_THAT(Message(sharc_module_set_parameter_sharding(module.get(), 1,
                                                          "{devices=[2,1,1]0,1}")),
              AllOf(HasSubstr("parameter 1 (%w: f32[6,3])"), HasSubstr("does not fit f32[6,3]")));
  // Not a sharding at all.
  EXPECT_THAT(Message(sharc_module_set_root_sharding(module.get(), "{devices=oops}")),
              AllOf(HasSubstr("the root %y"), HasSubstr("is neither an HLO sharding")));
  // An axis the mesh lacks.
  SHARC_ASSERT_OK(sharc_module_set_mesh(module.get(), "data=2"));
  EXPECT_THAT(Message(sharc_module_set_parameter_sharding(module.get(), 0, "P(model)")),
              HasSubstr("model"));
  EXPECT_THAT(Message(sharc_module_set_mesh(module.get(), "data")), HasSubstr("name=size"));
  EXPECT_THAT(Message(sharc_module_set_parameter_sharding(module.get(), 5, "{replicated}")),
              HasSubstr("parameter index 5 is out of range: the entry has 2 parameter(s)"));
}

TEST(CApiModule, CloneIsIndependent) {
  Owned<sharc_module> module = ParseOrDie(kMatmul);
  sharc_module* raw = nullptr;
  SHARC_ASSERT_OK(sharc_module_clone(module.get(), &raw));
  Owned<sharc_module> copy(raw);
  SHARC_ASSERT_OK(sharc_module_set_root_sharding(copy.get(), "{replicated}"));
  EXPECT_THAT(PrintModule(copy.get()), HasSubstr("sharding={replicated}"));
  EXPECT_THAT(PrintModule(module.get()), Not(HasSubstr("sharding=")));
}

}  // namespace
}  // namespace sharc::c_api_test
