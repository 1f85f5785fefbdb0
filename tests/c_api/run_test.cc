// Compiling and running through the C API gives what the reference
// interpreter gives for the global program, on any device count, backend
// and MapReduce lowering; inputs that do not fit are refused by name.
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
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

std::string ExamplePath(const char* name) {
  return std::string(SHARC_SOURCE_DIR) + "/examples/" + name;
}

Owned<sharc_module> ParseFile(const std::string& path) {
  sharc_module* module = nullptr;
  Owned<sharc_error> error(sharc_module_parse_file(path.c_str(), &module));
  EXPECT_EQ(error, nullptr) << sharc_error_message(error.get());
  return Owned<sharc_module>(module);
}

// Deterministic f32 inputs for every entry parameter of `module`, as
// literals (for the interpreter) that the sharc_arrays point into.
struct Inputs {
  std::vector<hlo::Literal> literals;
  std::vector<sharc_array> arrays;
};

Inputs MakeInputs(const hlo::Module& module) {
  Inputs inputs;
  for (const hlo::Instruction* parameter : module.entry()->parameters()) {
    hlo::Literal literal(parameter->shape());
    for (int64_t i = 0; i < literal.num_elements(); ++i) {
      literal.SetFromDouble(i, std::sin(0.37 * static_cast<double>(i + 7 * inputs.literals.size())));
    }
    inputs.literals.push_back(std::move(literal));
  }
  for (const hlo::Literal& literal : inputs.literals) {
    inputs.arrays.push_back({SHARC_DTYPE_F32, static_cast<int32_t>(literal.shape().rank()),
                             literal.shape().dims().data(), literal.untyped_data()});
  }
  return inputs;
}

// The interpreter's leaves of the global program on `inputs`.
std::vector<hlo::Literal> Interpret(const hlo::Module& module, const Inputs& inputs) {
  absl::StatusOr<hlo::Literal> result = hlo::Evaluate(module, inputs.literals);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  if (!result->is_tuple()) return {*std::move(result)};
  return result->elements();
}

// The module as the C API holds it, for the interpreter.
std::unique_ptr<hlo::Module> ToModule(const sharc_module* module) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> parsed =
      hlo::ParseAndVerifyModule(PrintModule(module));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *std::move(parsed) : nullptr;
}

// Runs `program` and checks its outputs against `expected` to `tolerance`
// (relative to 1 + |expected|).
void ExpectRunMatches(sharc_program* program, const Inputs& inputs,
                      const std::vector<hlo::Literal>& expected, double tolerance) {
  sharc_result* raw = nullptr;
  SHARC_ASSERT_OK(sharc_program_run(program, inputs.arrays.data(),
                                    static_cast<int64_t>(inputs.arrays.size()), &raw));
  Owned<sharc_result> result(raw);
  int64_t count = 0;
  SHARC_ASSERT_OK(sharc_result_num_outputs(result.get(), &count));
  ASSERT_EQ(count, static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < count; ++i) {
    sharc_array output;
    SHARC_ASSERT_OK(sharc_result_output(result.get(), i, &output));
    const hlo::Shape& shape = expected[i].shape();
    ASSERT_EQ(output.dtype, SHARC_DTYPE_F32);
    ASSERT_EQ(output.rank, shape.rank());
    for (int64_t d = 0; d < shape.rank(); ++d) ASSERT_EQ(output.dims[d], shape.dim(d));
    const float* values = static_cast<const float*>(output.data);
    for (int64_t e = 0; e < expected[i].num_elements(); ++e) {
      const double want = expected[i].GetAsDouble(e);
      ASSERT_NEAR(values[e], want, tolerance * (1 + std::fabs(want)))
          << "output " << i << " element " << e;
    }
    // The caller-memory copy holds the same bytes.
    std::vector<float> copy(static_cast<size_t>(expected[i].num_elements()));
    SHARC_ASSERT_OK(sharc_result_copy_output(result.get(), i, copy.data(),
                                             copy.size() * sizeof(float)));
    EXPECT_EQ(std::memcmp(copy.data(), values, copy.size() * sizeof(float)), 0);
  }
}

Owned<sharc_program> Compile(const sharc_module* module, int64_t devices, sharc_backend backend,
                             sharc_mapreduce_mode mode = SHARC_MAPREDUCE_ANNOTATED) {
  sharc_options* raw_options = nullptr;
  EXPECT_EQ(sharc_options_create(&raw_options), nullptr);
  Owned<sharc_options> options(raw_options);
  EXPECT_EQ(sharc_options_set_num_devices(options.get(), devices), nullptr);
  EXPECT_EQ(sharc_options_set_backend(options.get(), backend), nullptr);
  EXPECT_EQ(sharc_options_set_mapreduce_mode(options.get(), mode), nullptr);
  sharc_program* program = nullptr;
  Owned<sharc_error> error(sharc_compile(module, options.get(), &program));
  EXPECT_EQ(error, nullptr) << sharc_error_message(error.get());
  return Owned<sharc_program>(program);
}

class CApiRun : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ExamplePath("sharded_matmul.hlo");
    module_ = ParseFile(path_);
    ASSERT_NE(module_, nullptr);
    std::unique_ptr<hlo::Module> global = ToModule(module_.get());
    ASSERT_NE(global, nullptr);
    inputs_ = MakeInputs(*global);
    expected_ = Interpret(*global, inputs_);
  }

  std::string path_;
  Owned<sharc_module> module_;
  Inputs inputs_;
  std::vector<hlo::Literal> expected_;
};

TEST_F(CApiRun, TwoDevicesWithInterpreterKernelsEqualTheInterpreter) {
  Owned<sharc_program> program = Compile(module_.get(), 2, SHARC_BACKEND_INTERPRETER);
  ASSERT_NE(program, nullptr);
  int64_t devices = 0;
  SHARC_ASSERT_OK(sharc_program_num_devices(program.get(), &devices));
  EXPECT_EQ(devices, 2);
  int uses_halide = 1;
  SHARC_ASSERT_OK(sharc_program_uses_halide(program.get(), &uses_halide));
  EXPECT_EQ(uses_halide, 0);
  ExpectRunMatches(program.get(), inputs_, expected_, 1e-6);
  // A program runs again, and from several threads (the runs take turns).
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] { ExpectRunMatches(program.get(), inputs_, expected_, 1e-6); });
  }
  for (std::thread& thread : threads) thread.join();
}

TEST_F(CApiRun, DefaultBackendEqualsTheInterpreter) {
  Owned<sharc_program> program = Compile(module_.get(), 2, SHARC_BACKEND_DEFAULT);
  ASSERT_NE(program, nullptr);
  ExpectRunMatches(program.get(), inputs_, expected_, 1e-4);
}

TEST_F(CApiRun, OneDeviceRunsTheGlobalProgram) {
  Owned<sharc_program> program = Compile(module_.get(), 1, SHARC_BACKEND_INTERPRETER);
  ASSERT_NE(program, nullptr);
  ExpectRunMatches(program.get(), inputs_, expected_, 1e-6);
}

TEST_F(CApiRun, DeviceCountDefaultsToTheModules) {
  sharc_program* raw = nullptr;
  SHARC_ASSERT_OK(sharc_compile(module_.get(), nullptr, &raw));
  Owned<sharc_program> program(raw);
  int64_t devices = 0;
  SHARC_ASSERT_OK(sharc_program_num_devices(program.get(), &devices));
  EXPECT_EQ(devices, 2);  // num_partitions=2 in the header
}

TEST_F(CApiRun, PrintsEachStage) {
  Owned<sharc_program> program = Compile(module_.get(), 2, SHARC_BACKEND_INTERPRETER);
  ASSERT_NE(program, nullptr);
  char* text = nullptr;
  SHARC_ASSERT_OK(sharc_program_print(program.get(), SHARC_STAGE_PER_DEVICE, &text));
  Owned<char> per_device(text);
  // Each device holds half of x's rows.
  EXPECT_THAT(text, HasSubstr("f32[4,16] parameter(0)"));
  SHARC_ASSERT_OK(sharc_program_print(program.get(), SHARC_STAGE_PROPAGATED, &text));
  Owned<char> propagated(text);
  EXPECT_THAT(text, HasSubstr("f32[8,16] parameter(0), sharding={devices=[2,1]0,1}"));
  SHARC_ASSERT_OK(sharc_program_print(program.get(), SHARC_STAGE_PREPARED, &text));
  Owned<char> prepared(text);
  EXPECT_THAT(text, StartsWith("HloModule sharded_mlp_layer"));
  EXPECT_THAT(Message(sharc_program_print(program.get(), static_cast<sharc_program_stage>(9),
                                          &text)),
              HasSubstr("unknown stage 9"));
}

TEST_F(CApiRun, WrongInputsAreRefusedNamingTheParameter) {
  Owned<sharc_program> program = Compile(module_.get(), 2, SHARC_BACKEND_INTERPRETER);
  ASSERT_NE(program, nullptr);
  sharc_result* result = nullptr;
  std::vector<sharc_array> inputs = inputs_.arrays;

  // A dtype other than the parameter's.
  inputs[1].dtype = SHARC_DTYPE_F64;
  Owned<sharc_error> error(sharc_program_run(program.get(), inputs.data(), 3, &result));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(sharc_error_message(error.get()),
              AllOf(HasSubstr("input 1 for parameter %w (f32[16,4])"),
                    HasSubstr("dtype f64 but f32 is expected")));

  // Dims other than the parameter's.
  inputs = inputs_.arrays;
  const int64_t wrong_dims[] = {8, 15};
  inputs[0].dims = wrong_dims;
  EXPECT_THAT(Message(sharc_program_run(program.get(), inputs.data(), 3, &result)),
              AllOf(HasSubstr("input 0 for parameter %x (f32[8,16])"),
                    HasSubstr("the array is f32[8,15] but f32[8,16] is expected")));
  inputs[0].rank = 1;
  EXPECT_THAT(Message(sharc_program_run(program.get(), inputs.data(), 3, &result)),
              HasSubstr("the array is f32[8] but f32[8,16] is expected"));

  // Too few inputs, missing data, an unknown dtype.
  inputs = inputs_.arrays;
  EXPECT_THAT(Message(sharc_program_run(program.get(), inputs.data(), 2, &result)),
              HasSubstr("the program takes 3 input(s), one per entry parameter, but 2 were given"));
  EXPECT_THAT(Message(sharc_program_run(program.get(), nullptr, 3, &result)),
              HasSubstr("inputs is NULL"));
  inputs[2].data = nullptr;
  EXPECT_THAT(Message(sharc_program_run(program.get(), inputs.data(), 3, &result)),
              AllOf(HasSubstr("parameter %bias"), HasSubstr("data is NULL")));
  inputs = inputs_.arrays;
  inputs[2].dtype = static_cast<sharc_dtype>(77);
  EXPECT_THAT(Message(sharc_program_run(program.get(), inputs.data(), 3, &result)),
              AllOf(HasSubstr("parameter %bias"), HasSubstr("unknown dtype 77")));
  EXPECT_EQ(result, nullptr);

  // The program still runs after all that.
  ExpectRunMatches(program.get(), inputs_, expected_, 1e-6);
}

// Complex arrays cross the C API as (real, imaginary) pairs.
TEST(CApiComplex, ComplexArraysRunAndComeBack) {
  sharc_module* raw_module = nullptr;
  SHARC_ASSERT_OK(sharc_module_parse(R"(HloModule cx
ENTRY e {
  x = c64[3] parameter(0)
  ROOT sq = c64[3] multiply(x, x)
})",
                                     "cx.hlo", &raw_module));
  Owned<sharc_module> module(raw_module);
  EXPECT_EQ(sharc_dtype_size(SHARC_DTYPE_C64), 8u);
  EXPECT_EQ(sharc_dtype_size(SHARC_DTYPE_C128), 16u);
  EXPECT_STREQ(sharc_dtype_name(SHARC_DTYPE_C128), "c128");
  sharc_program* raw_program = nullptr;
  SHARC_ASSERT_OK(sharc_compile(module.get(), nullptr, &raw_program));
  Owned<sharc_program> program(raw_program);
  const float x[6] = {1, 2, 3, -1, 0, 0.5f};  // 1+2i, 3-i, 0.5i
  const int64_t dims[] = {3};
  const sharc_array input = {SHARC_DTYPE_C64, 1, dims, x};
  sharc_result* raw_result = nullptr;
  SHARC_ASSERT_OK(sharc_program_run(program.get(), &input, 1, &raw_result));
  Owned<sharc_result> result(raw_result);
  sharc_array out;
  SHARC_ASSERT_OK(sharc_result_output(result.get(), 0, &out));
  EXPECT_EQ(out.dtype, SHARC_DTYPE_C64);
  const float* got = static_cast<const float*>(out.data);
  const float want[6] = {-3, 4, 8, -6, -0.25f, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << i;
}

TEST_F(CApiRun, CopyOutputChecksTheCapacity) {
  Owned<sharc_program> program = Compile(module_.get(), 2, SHARC_BACKEND_INTERPRETER);
  ASSERT_NE(program, nullptr);
  sharc_result* raw = nullptr;
  SHARC_ASSERT_OK(sharc_program_run(program.get(), inputs_.arrays.data(), 3, &raw));
  Owned<sharc_result> result(raw);
  float small[4];
  EXPECT_THAT(Message(sharc_result_copy_output(result.get(), 0, small, sizeof(small))),
              HasSubstr("output 0 (f32[8,4]) needs 128 bytes but the destination holds 16"));
  sharc_array output;
  Owned<sharc_error> error(sharc_result_output(result.get(), 2, &output));
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_OUT_OF_RANGE);
}

// The MapReduce lowerings compute the same round of federated averaging.
TEST(CApiMapReduce, EveryLoweringEqualsTheInterpreter) {
  const std::string path = ExamplePath("fedavg_round.hlo");
  Owned<sharc_module> module = ParseFile(path);
  ASSERT_NE(module, nullptr);
  std::unique_ptr<hlo::Module> global = ToModule(module.get());
  ASSERT_NE(global, nullptr);
  const Inputs inputs = MakeInputs(*global);
  const std::vector<hlo::Literal> expected = Interpret(*global, inputs);
  for (sharc_mapreduce_mode mode :
       {SHARC_MAPREDUCE_ANNOTATED, SHARC_MAPREDUCE_NS, SHARC_MAPREDUCE_LOOP}) {
    SCOPED_TRACE(mode);
    Owned<sharc_program> program = Compile(module.get(), 4, SHARC_BACKEND_INTERPRETER, mode);
    ASSERT_NE(program, nullptr);
    ExpectRunMatches(program.get(), inputs, expected, 1e-4);
  }
}

TEST(CApiMapReduce, MeshOptionOverridesTheHeader) {
  Owned<sharc_module> module = ParseFile(ExamplePath("fedavg_round.hlo"));
  ASSERT_NE(module, nullptr);
  sharc_options* raw_options = nullptr;
  SHARC_ASSERT_OK(sharc_options_create(&raw_options));
  Owned<sharc_options> options(raw_options);
  SHARC_ASSERT_OK(sharc_options_set_mesh(options.get(), "clients=2"));
  SHARC_ASSERT_OK(sharc_options_set_backend(options.get(), SHARC_BACKEND_INTERPRETER));
  sharc_program* raw = nullptr;
  SHARC_ASSERT_OK(sharc_compile(module.get(), options.get(), &raw));
  Owned<sharc_program> program(raw);
  int64_t devices = 0;
  SHARC_ASSERT_OK(sharc_program_num_devices(program.get(), &devices));
  EXPECT_EQ(devices, 2);

  // A device count the mesh does not have is refused, as `--mesh` with
  // `--devices` is.
  SHARC_ASSERT_OK(sharc_options_set_num_devices(options.get(), 4));
  EXPECT_THAT(Message(sharc_compile(module.get(), options.get(), &raw)),
              HasSubstr("has 2 devices but num_devices is 4"));
  EXPECT_THAT(Message(sharc_options_set_mesh(options.get(), "clients=zero")),
              HasSubstr("name=size"));
}

// sharc_options_set_pass_timings is `--pass-timings`: the program keeps the
// report of every compiler pass's wall time; without it the report is "".
TEST(CApiCompile, PassTimingsReportEveryPass) {
  Owned<sharc_module> module = ParseFile(ExamplePath("fedavg_round.hlo"));
  ASSERT_NE(module, nullptr);
  sharc_options* raw_options = nullptr;
  SHARC_ASSERT_OK(sharc_options_create(&raw_options));
  Owned<sharc_options> options(raw_options);
  SHARC_ASSERT_OK(sharc_options_set_backend(options.get(), SHARC_BACKEND_INTERPRETER));
  SHARC_ASSERT_OK(sharc_options_set_mesh(options.get(), "clients=2"));
  for (const int enabled : {1, 0}) {
    SHARC_ASSERT_OK(sharc_options_set_pass_timings(options.get(), enabled));
    sharc_program* raw = nullptr;
    SHARC_ASSERT_OK(sharc_compile(module.get(), options.get(), &raw));
    Owned<sharc_program> program(raw);
    const char* text = nullptr;
    SHARC_ASSERT_OK(sharc_program_pass_timings(program.get(), &text));
    if (enabled == 0) {
      EXPECT_STREQ(text, "");
      continue;
    }
    EXPECT_THAT(text, AllOf(StartsWith("Total runtime (ms) of HLO passes: "),
                            HasSubstr("\nPass name, num runs, time (ms)\n"),
                            HasSubstr("\nlower-mapreduce, 1, "), HasSubstr("\npropagate, ")));
  }
}

TEST(CApiCompile, ShardingsThatDoNotFitTheDevicesAreCompileErrors) {
  Owned<sharc_module> module = ParseOrDie(
      "HloModule m, num_partitions=2\n\nENTRY %main {\n"
      "  %x = f32[8] parameter(0), sharding={devices=[2]0,1}\n"
      "  ROOT %y = f32[8] negate(%x)\n}\n");
  ASSERT_NE(module, nullptr);
  SHARC_ASSERT_OK(sharc_module_set_parameter_sharding(module.get(), 0, "{devices=[4]0,1,2,3}"));
  sharc_program* program = nullptr;
  Owned<sharc_error> error(sharc_compile(module.get(), nullptr, &program));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_get_code(error.get()), SHARC_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(sharc_error_exit_code(error.get()), 1);
  EXPECT_THAT(sharc_error_message(error.get()),
              AllOf(StartsWith("sharc_compile: "), HasSubstr("for 2 device(s)"),
                    HasSubstr("%x = f32[8] parameter(0)")));
  EXPECT_EQ(program, nullptr);
}

// An op Halide does not lower: the default backend falls back to the
// interpreter's kernels and says so in the notes; asking for Halide is a
// compile error naming the op.
TEST(CApiBackend, InterpreterFallbackIsANoteAndHalideOnlyAnError) {
  // reduce-window with a reducer that branches (a conditional is not
  // elementwise, so it has no Halide lowering).
  Owned<sharc_module> module = ParseOrDie(R"(HloModule window_diff, num_partitions=2

%neg {
  %p = f32[] parameter(0)
  ROOT %n = f32[] negate(%p)
}

%same {
  %p = f32[] parameter(0)
  ROOT %c = f32[] copy(%p)
}

%picks {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %lt = pred[] compare(%a, %b), direction=LT
  ROOT %c = f32[] conditional(%lt, %a, %b), true_computation=%neg, false_computation=%same
}

ENTRY %main {
  %operand = f32[5,4] parameter(0)
  %zero = f32[] constant(0)
  ROOT %diff = f32[4,4] reduce-window(%operand, %zero), window={size=2x1}, to_apply=%picks
}
)");
  ASSERT_NE(module, nullptr);
  Owned<sharc_program> program = Compile(module.get(), 2, SHARC_BACKEND_DEFAULT);
  ASSERT_NE(program, nullptr);
  const char* notes = nullptr;
  SHARC_ASSERT_OK(sharc_program_notes(program.get(), &notes));
  EXPECT_THAT(notes, HasSubstr("reduce-window"));
  // The reduce-window runs on the interpreter's kernel, the rest of the
  // program (the partitioner's ops around it) on Halide kernels.
  EXPECT_THAT(notes, HasSubstr("on the interpreter's kernels, the rest on Halide kernels"));
  int uses_halide = 0;
  SHARC_ASSERT_OK(sharc_program_uses_halide(program.get(), &uses_halide));
  EXPECT_EQ(uses_halide, 1);
  std::unique_ptr<hlo::Module> global = ToModule(module.get());
  ASSERT_NE(global, nullptr);
  const Inputs inputs = MakeInputs(*global);
  ExpectRunMatches(program.get(), inputs, Interpret(*global, inputs), 0);

  sharc_options* raw_options = nullptr;
  SHARC_ASSERT_OK(sharc_options_create(&raw_options));
  Owned<sharc_options> options(raw_options);
  SHARC_ASSERT_OK(sharc_options_set_backend(options.get(), SHARC_BACKEND_HALIDE));
  sharc_program* halide_only = nullptr;
  Owned<sharc_error> error(sharc_compile(module.get(), options.get(), &halide_only));
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(sharc_error_exit_code(error.get()), 1);
  EXPECT_THAT(sharc_error_message(error.get()),
              AllOf(StartsWith("sharc_compile: "), HasSubstr("reduce-window")));
}

// Distinct programs compile and run on different threads at the same time.
TEST(CApiThreads, DistinctProgramsRunConcurrently) {
  const std::vector<std::string> paths = {ExamplePath("sharded_matmul.hlo"),
                                          ExamplePath("fedavg_round.hlo")};
  std::vector<std::thread> threads;
  for (const std::string& path : paths) {
    threads.emplace_back([path] {
      Owned<sharc_module> module = ParseFile(path);
      ASSERT_NE(module, nullptr);
      std::unique_ptr<hlo::Module> global = ToModule(module.get());
      ASSERT_NE(global, nullptr);
      const Inputs inputs = MakeInputs(*global);
      const std::vector<hlo::Literal> expected = Interpret(*global, inputs);
      sharc_program* raw = nullptr;
      SHARC_ASSERT_OK(sharc_compile(module.get(), nullptr, &raw));
      Owned<sharc_program> program(raw);
      for (int run = 0; run < 3; ++run) ExpectRunMatches(program.get(), inputs, expected, 1e-4);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace sharc::c_api_test
