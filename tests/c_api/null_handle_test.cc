// Misuse of the C API is an error object, never a crash: NULL handles and
// out-pointers, values outside the enums; and the error objects themselves.
#include <string>

#include "gmock/gmock.h"
#include "tests/c_api/c_api_test_util.h"

namespace sharc::c_api_test {
namespace {

using ::testing::HasSubstr;

void ExpectNullError(sharc_error* error, const std::string& function, const std::string& what) {
  Owned<sharc_error> owned(error);
  ASSERT_NE(error, nullptr) << function;
  EXPECT_EQ(sharc_error_get_code(error), SHARC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(sharc_error_message(error)), function + ": " + what + " is NULL");
}

TEST(CApiNullHandles, EveryFunctionRefusesNull) {
  int64_t count;
  sharc_dtype dtype;
  int32_t rank;
  const char* text;
  char* owned_text;
  double number;
  int flag;
  sharc_value value;
  sharc_array array;
  sharc_module* module = nullptr;
  sharc_program* program = nullptr;
  sharc_result* result = nullptr;
  sharc_report* report = nullptr;
  sharc_builder* builder = nullptr;
  sharc_options* options = nullptr;

  ExpectNullError(sharc_module_parse(nullptr, "f", &module), "sharc_module_parse", "text");
  ExpectNullError(sharc_module_parse("HloModule m", "f", nullptr), "sharc_module_parse", "out");
  ExpectNullError(sharc_module_parse_file(nullptr, &module), "sharc_module_parse_file", "path");
  ExpectNullError(sharc_module_clone(nullptr, &module), "sharc_module_clone", "module");
  ExpectNullError(sharc_module_print(nullptr, &owned_text), "sharc_module_print", "module");
  ExpectNullError(sharc_module_num_parameters(nullptr, &count), "sharc_module_num_parameters",
                  "module");
  ExpectNullError(sharc_module_parameter_shape(nullptr, 0, &dtype, &rank, nullptr, 0),
                  "sharc_module_parameter_shape", "module");
  ExpectNullError(sharc_module_set_mesh(nullptr, "x=2"), "sharc_module_set_mesh", "module");
  ExpectNullError(sharc_module_set_parameter_sharding(nullptr, 0, "{replicated}"),
                  "sharc_module_set_parameter_sharding", "module");
  ExpectNullError(sharc_module_set_root_sharding(nullptr, "{replicated}"),
                  "sharc_module_set_root_sharding", "module");

  ExpectNullError(sharc_builder_create("m", nullptr), "sharc_builder_create", "out");
  ExpectNullError(sharc_builder_parameter(nullptr, "x", SHARC_DTYPE_F32, 0, nullptr, &value),
                  "sharc_builder_parameter", "builder");
  ExpectNullError(sharc_builder_constant(nullptr, &array, &value), "sharc_builder_constant",
                  "builder");
  ExpectNullError(sharc_builder_unary(nullptr, "negate", 0, &value), "sharc_builder_unary",
                  "builder");
  ExpectNullError(sharc_builder_binary(nullptr, "add", 0, 0, &value), "sharc_builder_binary",
                  "builder");
  ExpectNullError(sharc_builder_convert(nullptr, 0, SHARC_DTYPE_F32, &value),
                  "sharc_builder_convert", "builder");
  ExpectNullError(sharc_builder_dot(nullptr, 0, 0, nullptr, nullptr, 0, nullptr, nullptr, 0,
                                    &value),
                  "sharc_builder_dot", "builder");
  ExpectNullError(sharc_builder_reduce_sum(nullptr, 0, nullptr, 0, &value),
                  "sharc_builder_reduce_sum", "builder");
  ExpectNullError(sharc_builder_reshape(nullptr, 0, 0, nullptr, &value), "sharc_builder_reshape",
                  "builder");
  ExpectNullError(sharc_builder_transpose(nullptr, 0, nullptr, 0, &value),
                  "sharc_builder_transpose", "builder");
  ExpectNullError(sharc_builder_broadcast(nullptr, 0, 0, nullptr, nullptr, &value),
                  "sharc_builder_broadcast", "builder");
  ExpectNullError(sharc_builder_instruction(nullptr, "%x = f32[] constant(1)", &value),
                  "sharc_builder_instruction", "builder");
  ExpectNullError(sharc_builder_value_name(nullptr, 0, &text), "sharc_builder_value_name",
                  "builder");
  ExpectNullError(sharc_builder_value_shape(nullptr, 0, &dtype, &rank, nullptr, 0),
                  "sharc_builder_value_shape", "builder");
  ExpectNullError(sharc_builder_set_mesh(nullptr, "x=2"), "sharc_builder_set_mesh", "builder");
  ExpectNullError(sharc_builder_set_sharding(nullptr, 0, "{replicated}"),
                  "sharc_builder_set_sharding", "builder");
  ExpectNullError(sharc_builder_finish(nullptr, &value, 1, &module), "sharc_builder_finish",
                  "builder");

  ExpectNullError(sharc_options_create(nullptr), "sharc_options_create", "out");
  ExpectNullError(sharc_options_set_mesh(nullptr, "x=2"), "sharc_options_set_mesh", "options");
  ExpectNullError(sharc_options_set_num_devices(nullptr, 2), "sharc_options_set_num_devices",
                  "options");
  ExpectNullError(sharc_options_set_mapreduce_mode(nullptr, SHARC_MAPREDUCE_NS),
                  "sharc_options_set_mapreduce_mode", "options");
  ExpectNullError(sharc_options_set_backend(nullptr, SHARC_BACKEND_HALIDE),
                  "sharc_options_set_backend", "options");
  ExpectNullError(sharc_options_set_collective_timeout(nullptr, 1),
                  "sharc_options_set_collective_timeout", "options");
  ExpectNullError(sharc_options_set_pass_timings(nullptr, 1), "sharc_options_set_pass_timings",
                  "options");

  ExpectNullError(sharc_compile(nullptr, nullptr, &program), "sharc_compile", "module");
  ExpectNullError(sharc_program_num_devices(nullptr, &count), "sharc_program_num_devices",
                  "program");
  ExpectNullError(sharc_program_uses_halide(nullptr, &flag), "sharc_program_uses_halide",
                  "program");
  ExpectNullError(sharc_program_notes(nullptr, &text), "sharc_program_notes", "program");
  ExpectNullError(sharc_program_pass_timings(nullptr, &text), "sharc_program_pass_timings",
                  "program");
  ExpectNullError(sharc_program_print(nullptr, SHARC_STAGE_PREPARED, &owned_text),
                  "sharc_program_print", "program");
  ExpectNullError(sharc_program_num_parameters(nullptr, &count), "sharc_program_num_parameters",
                  "program");
  ExpectNullError(sharc_program_parameter_shape(nullptr, 0, &dtype, &rank, nullptr, 0),
                  "sharc_program_parameter_shape", "program");
  ExpectNullError(sharc_program_run(nullptr, nullptr, 0, &result), "sharc_program_run",
                  "program");
  ExpectNullError(sharc_result_num_outputs(nullptr, &count), "sharc_result_num_outputs",
                  "result");
  ExpectNullError(sharc_result_output(nullptr, 0, &array), "sharc_result_output", "result");
  ExpectNullError(sharc_result_copy_output(nullptr, 0, &number, sizeof(number)),
                  "sharc_result_copy_output", "result");
  ExpectNullError(sharc_program_report(nullptr, &report), "sharc_program_report", "program");
  ExpectNullError(sharc_report_json(nullptr, &text), "sharc_report_json", "report");
  ExpectNullError(sharc_report_text(nullptr, &text), "sharc_report_text", "report");
  ExpectNullError(sharc_report_num_devices(nullptr, &count), "sharc_report_num_devices", "report");
  ExpectNullError(sharc_report_flops(nullptr, &number), "sharc_report_flops", "report");
  ExpectNullError(sharc_report_bytes_accessed(nullptr, &number), "sharc_report_bytes_accessed",
                  "report");
  ExpectNullError(sharc_report_peak_memory_bytes(nullptr, &count),
                  "sharc_report_peak_memory_bytes", "report");
  ExpectNullError(sharc_report_communication_bytes(nullptr, &count),
                  "sharc_report_communication_bytes", "report");

  // Nothing was handed out, and freeing NULL is fine.
  EXPECT_EQ(module, nullptr);
  EXPECT_EQ(program, nullptr);
  EXPECT_EQ(builder, nullptr);
  EXPECT_EQ(options, nullptr);
  sharc_module_free(nullptr);
  sharc_builder_free(nullptr);
  sharc_options_free(nullptr);
  sharc_program_free(nullptr);
  sharc_result_free(nullptr);
  sharc_report_free(nullptr);
  sharc_error_free(nullptr);
  sharc_string_free(nullptr);
}

TEST(CApiNullHandles, NullOutPointersOnRealHandles) {
  Owned<sharc_module> module = ParseOrDie("HloModule m\nENTRY %e { ROOT %x = f32[2] parameter(0) }");
  ExpectNullError(sharc_module_print(module.get(), nullptr), "sharc_module_print", "out_text");
  ExpectNullError(sharc_module_num_parameters(module.get(), nullptr),
                  "sharc_module_num_parameters", "out_count");
  ExpectNullError(sharc_module_set_mesh(module.get(), nullptr), "sharc_module_set_mesh", "mesh");
  ExpectNullError(sharc_compile(module.get(), nullptr, nullptr), "sharc_compile", "out");
}

TEST(CApiErrors, SuccessIsNullAndReadsAsOk) {
  EXPECT_EQ(sharc_error_get_code(nullptr), SHARC_OK);
  EXPECT_STREQ(sharc_error_message(nullptr), "");
  EXPECT_EQ(sharc_error_exit_code(nullptr), 0);
}

TEST(CApiErrors, CodesHaveNamesAndTheCommandsExitCodes) {
  EXPECT_STREQ(sharc_error_code_name(SHARC_ERROR_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(sharc_error_code_name(SHARC_ERROR_ABORTED), "ABORTED");
  EXPECT_STREQ(sharc_error_code_name(static_cast<sharc_error_code>(99)), "UNKNOWN_CODE");
  sharc_options* raw = nullptr;
  SHARC_ASSERT_OK(sharc_options_create(&raw));
  Owned<sharc_options> options(raw);
  Owned<sharc_error> error(sharc_options_set_backend(options.get(), static_cast<sharc_backend>(7)));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_exit_code(error.get()), 1);
  EXPECT_THAT(sharc_error_message(error.get()), HasSubstr("unknown backend 7"));
  EXPECT_THAT(Message(sharc_options_set_mapreduce_mode(options.get(),
                                                       static_cast<sharc_mapreduce_mode>(5))),
              HasSubstr("unknown mode 5"));
  EXPECT_THAT(Message(sharc_options_set_collective_timeout(options.get(), -1)),
              HasSubstr("positive number of seconds"));
  EXPECT_THAT(Message(sharc_options_set_num_devices(options.get(), -2)),
              HasSubstr("num_devices -2 is outside"));
}

TEST(CApiErrors, DtypesHaveSizesAndNames) {
  EXPECT_EQ(sharc_dtype_size(SHARC_DTYPE_F32), 4u);
  EXPECT_EQ(sharc_dtype_size(SHARC_DTYPE_BF16), 2u);
  EXPECT_EQ(sharc_dtype_size(SHARC_DTYPE_PRED), 1u);
  EXPECT_EQ(sharc_dtype_size(static_cast<sharc_dtype>(40)), 0u);
  EXPECT_STREQ(sharc_dtype_name(SHARC_DTYPE_S64), "s64");
  EXPECT_STREQ(sharc_dtype_name(SHARC_DTYPE_INVALID), "invalid");
  EXPECT_STREQ(sharc_version(), "0.1.0");
}

}  // namespace
}  // namespace sharc::c_api_test
