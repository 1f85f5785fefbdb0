// The `sharc` binary with the Halide backend: --backend, --iterations,
// `sharc compile --dump-dir` and its cache report, and the error for an op
// the backend cannot run. Each test has its own kernel cache directory.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::codegen {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

class HalideCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("sharc_halide_cli_", ::getpid(), "_", info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // `env`: more VAR=value words for the command's environment.
  CommandResult Sharc(const std::string& args, const std::string& env = "") const {
    const std::string command =
        absl::StrCat("SHARC_CACHE_DIR=", Path("cache"), " ", env, " ", SHARC_BINARY, " ", args, " >",
                     Path("out.txt"), " 2>", Path("err.txt"));
    const int status = std::system(command.c_str());
    return CommandResult{WIFEXITED(status) ? WEXITSTATUS(status) : -1, Read(Path("out.txt")),
                         Read(Path("err.txt"))};
  }

  // The environment that schedules kernels for `core` (cpu_tuning.h).
  static std::string TunedFor(const std::string& core) { return "SHARC_CPU_TUNE=" + core; }

  // `sharc compile FILE` with SHARC_CPU_TUNE=core: the dumped kernels'
  // text (4_kernels.txt), or empty after a failure it reports.
  std::string KernelsCompiledFor(const std::string& file, const std::string& core) const {
    const std::string dump = Path("dump_" + core);
    CommandResult compiled = Sharc(absl::StrCat("compile ", file, " --dump-dir ", dump), TunedFor(core));
    EXPECT_EQ(compiled.exit_code, 0) << compiled.err;
    EXPECT_THAT(compiled.out, ContainsRegex("kernels: [1-9][0-9]* compiled, 0 loaded"));
    return compiled.exit_code == 0 ? Read(dump + "/4_kernels.txt") : "";
  }

  std::filesystem::path dir_;
};

constexpr char kModule[] = R"(HloModule cli
ENTRY %main {
  %x = f32[4,33] parameter(0)
  %y = f32[4,33] parameter(1)
  %s = f32[4,33] add(%x, %y)
  %t = f32[4,33] tanh(%s)
  ROOT %m = f32[4,33] multiply(%t, %x)
}
)";

TEST_F(HalideCliTest, RunPrintsTheMedianAndMatchesTheInterpreter) {
  const std::string file = Write("m.hlo", kModule);
  CommandResult halide = Sharc(absl::StrCat("run ", file, " --random-inputs --backend halide --iterations 3"));
  ASSERT_EQ(halide.exit_code, 0) << halide.err;
  EXPECT_THAT(halide.out, ContainsRegex("median [0-9]+\\.[0-9]{3} ms per run"));
  // Not a terminal: no progress line.
  EXPECT_THAT(halide.err, ::testing::Not(HasSubstr("compiling kernels")));
  CommandResult interpreted = Sharc(absl::StrCat("run ", file, " --random-inputs --backend interpreter"));
  ASSERT_EQ(interpreted.exit_code, 0) << interpreted.err;
  // Same statistics (6 digits; single values may differ in the last of 9
  // printed digits, tanh being a polynomial in Halide).
  auto stats = [](const std::string& out) { return out.substr(out.find("min=")); };
  EXPECT_EQ(stats(halide.out), stats(interpreted.out));
  CommandResult partitioned = Sharc(absl::StrCat("run ", file, " --random-inputs --devices 2 --check"));
  ASSERT_EQ(partitioned.exit_code, 0) << partitioned.err;
  EXPECT_THAT(partitioned.err, HasSubstr("Halide kernels"));
  EXPECT_THAT(partitioned.err, HasSubstr("check: the partitioned run matches"));
}

TEST_F(HalideCliTest, CompileDumpsEveryStageAndSecondCompileIsCached) {
  const std::string file = Write("m.hlo", kModule);
  CommandResult first = Sharc(absl::StrCat("compile ", file, " --dump-dir ", Path("dump")));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  for (const char* stage : {"1_propagated.hlo", "2_partition_1_insert_reshards.hlo",
                            "2_partition_2_reshard_to_collectives.hlo", "2_partitioned.hlo",
                            "3_fused.hlo", "4_kernels.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(Path(std::string("dump/") + stage))) << stage;
  }
  EXPECT_THAT(Read(Path("dump/3_fused.hlo")), HasSubstr("backend_config=\"sharc.fusion\""));
  const std::string kernels = Read(Path("dump/4_kernels.txt"));
  EXPECT_THAT(kernels, HasSubstr("--- Halide\n"));
  // The loop nest is Halide's lowered statement: the kernel's function and
  // the stages it produces.
  EXPECT_THAT(kernels, HasSubstr("--- Halide loop nest\n"));
  EXPECT_THAT(kernels, ContainsRegex("func sharc_k_[0-9a-f]+ \\("));
  EXPECT_THAT(kernels, HasSubstr("produce "));
  EXPECT_THAT(first.out, ContainsRegex("kernels: [1-9][0-9]* compiled, 0 loaded"));
  EXPECT_THAT(first.out, ContainsRegex("compile phases \\(ms, summed over kernels\\): build "
                                       "[0-9.]+, Halide lowering [0-9.]+, LLVM IR [0-9.]+"));
  CommandResult second = Sharc(absl::StrCat("compile ", file, " --dump-dir ", Path("dump")));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, ContainsRegex("kernels: 0 compiled, 1 loaded from the cache"));
  EXPECT_THAT(second.out, Not(HasSubstr("compile phases")));
}

TEST_F(HalideCliTest, UnsupportedOpIsAnErrorOnlyWhenHalideIsAskedFor) {
  // A reducer that branches (conditional) has no Halide lowering.
  const std::string file = Write("g.hlo", absl::StrCat("HloModule g\n", testing_util::kBranchingReducer, R"(
ENTRY main {
  x = f32[5,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,3] reduce-window(x, z), window={size=2x1}, to_apply=picks
}
)"));
  CommandResult forced = Sharc(absl::StrCat("run ", file, " --random-inputs --backend halide"));
  EXPECT_EQ(forced.exit_code, 1);
  EXPECT_THAT(forced.err, HasSubstr("--backend halide"));
  EXPECT_THAT(forced.err, HasSubstr("reduce-window"));
  CommandResult fallback = Sharc(absl::StrCat("run ", file, " --random-inputs"));
  EXPECT_EQ(fallback.exit_code, 0) << fallback.err;
  EXPECT_THAT(fallback.err, HasSubstr("note: running 1 instruction(s) on the interpreter's "
                                      "kernels, the rest on Halide kernels"));
  CommandResult interpreted =
      Sharc(absl::StrCat("run ", file, " --random-inputs --backend interpreter"));
  EXPECT_EQ(interpreted.exit_code, 0) << interpreted.err;
  EXPECT_EQ(fallback.out, interpreted.out);
}

// The default backend runs an op Halide cannot lower (sort) on the
// interpreter's kernel between Halide kernels: the ops around it are still
// fused and compiled, and the result equals the interpreter's.
TEST_F(HalideCliTest, OneUnlowerableOpRunsOnTheInterpreterBetweenHalideKernels) {
  const std::string file = Write("mixed.hlo", R"(HloModule mixed
lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e {
  x = f32[16,32] parameter(0)
  w = f32[32,8] parameter(1)
  t = f32[16,32] tanh(x)
  s = f32[16,32] sort(t), dimensions={1}, to_apply=lt
  e = f32[16,32] exponential(s)
  ROOT d = f32[16,8] dot(e, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  CommandResult mixed = Sharc(absl::StrCat("run ", file, " --random-inputs --output-dir ", Path("m")));
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_THAT(mixed.err, HasSubstr("running 1 instruction(s) on the interpreter's kernels"));
  EXPECT_THAT(mixed.err, HasSubstr("sort"));
  CommandResult compiled = Sharc(absl::StrCat("compile ", file, " --dump-dir ", Path("mixed_dump")));
  // `sharc compile` is the Halide backend alone: it names the op it cannot lower.
  EXPECT_EQ(compiled.exit_code, 1);
  EXPECT_THAT(compiled.err, HasSubstr("sort"));
  CommandResult reference = Sharc(
      absl::StrCat("run ", file, " --random-inputs --backend interpreter --output-dir ", Path("i")));
  ASSERT_EQ(reference.exit_code, 0) << reference.err;
  ASSERT_OK_AND_ASSIGN(hlo::Literal got, runtime::ReadNpyFile(Path("m/out0.npy")));
  ASSERT_OK_AND_ASSIGN(hlo::Literal want, runtime::ReadNpyFile(Path("i/out0.npy")));
  EXPECT_TRUE(testing_util::LiteralsMatch(want, got, 1e-5, 1e-5, "mixed run"));
}

// SHARC_CPU_TUNE picks the core a kernel is scheduled for (cpu_tuning.h):
// a long sum reads its chunks four pages side by side for a Zen 3 and front
// to back for a Zen 4, and both agree with the interpreter. Each tuning
// keys its own kernels in the cache.
TEST_F(HalideCliTest, CpuTuneChoosesHowALongSumWalksMemory) {
  const std::string file = Write("sum.hlo", R"(HloModule sum
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT r = f32[] add(x, y) }
ENTRY main {
  v = f32[262144] parameter(0)
  z = f32[] constant(0)
  ROOT s = f32[] reduce(v, z), dimensions={0}, to_apply=add
}
)");
  for (const char* core : {"zen3", "zen4"}) {
    SCOPED_TRACE(core);
    const std::string nest = KernelsCompiledFor(file, core);
    EXPECT_THAT(nest, HasSubstr("halide_do_par_for"));
    if (std::string(core) == "zen3") {
      EXPECT_THAT(nest, ContainsRegex("for \\([^,]+\\.pages, 0, [0-9]+\\)"));
    } else {
      EXPECT_THAT(nest, Not(HasSubstr(".pages")));
    }
    CommandResult checked = Sharc(absl::StrCat("run ", file, " --random-inputs --devices 2 --check"),
                                   TunedFor(core));
    ASSERT_EQ(checked.exit_code, 0) << checked.err;
    EXPECT_THAT(checked.err, HasSubstr("check: the partitioned run matches"));
  }
  CommandResult unknown =
      Sharc(absl::StrCat("compile ", file, " --dump-dir ", Path("dump_unknown")), TunedFor("pentium"));
  EXPECT_EQ(unknown.exit_code, 0) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("ignoring SHARC_CPU_TUNE=pentium (expected zen3, zen4 or other)"));
}

// Softmax's exp has two ways with the lanes that round to +0 (vector_math.h:
// selecting +0, for Intel cores; scaling by an exact +0, for AMD's): the
// non-positive exp (of -|x|) gives the same bits either way, over a dense
// sweep of exp's whole range and the specials; the general exp and
// logistic beside it must not change with the core.
TEST_F(HalideCliTest, ExpUnderflowFormsAgreeBitForBitAcrossCores) {
  std::vector<float> x;
  // Down to -140: below -131.7 the zero-scale form clamps, between -131.35
  // and -103.98 its multiply underflows.
  for (int i = 0; i <= 200000; ++i) x.push_back(static_cast<float>(-140.0 + 235.0 * i / 200000));
  for (float centre : {-103.972076f, -103.98f, -104.0f, -87.3365479f, -131.7f, -131.351387f, -132.04f}) {
    float v = centre;
    for (int i = 0; i < 300; ++i) v = std::nextafter(v, -1e30f);
    for (int i = 0; i < 600; ++i, v = std::nextafter(v, 1e30f)) x.push_back(v);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f, 1e-45f, -1e30f}) {
    x.push_back(v);
  }
  const std::string n = std::to_string(x.size());
  ASSERT_TRUE(runtime::WriteNpyFile(Path("x.npy"), hlo::Literal::Vector<float>(x)).ok());
  const std::string file = Write("exp.hlo", absl::StrReplaceAll(R"(HloModule exp
ENTRY main {
  x = f32[$N] parameter(0)
  e = f32[$N] exponential(x)
  a = f32[$N] abs(x)
  s = f32[$N] negate(a)
  en = f32[$N] exponential(s)
  l = f32[$N] logistic(x)
  ROOT t = (f32[$N], f32[$N], f32[$N]) tuple(e, en, l)
}
)", {{"$N", n}}));
  std::vector<std::string> outputs[2];
  int k = 0;
  for (const char* core : {"other", "zen4"}) {
    SCOPED_TRACE(core);
    const std::string kernels = KernelsCompiledFor(file, core);
    ASSERT_FALSE(kernels.empty());
    // Only the select form has the non-positive exp's stand-in input.
    EXPECT_EQ(kernels.find("-80.000000f") != std::string::npos, k == 0);
    const std::string out = Path(absl::StrCat("out_", core));
    CommandResult ran = Sharc(
        absl::StrCat("run ", file, " --backend halide --input ", Path("x.npy"), " --output-dir ", out),
        TunedFor(core));
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    for (int i = 0; i < 3; ++i) outputs[k].push_back(Read(absl::StrCat(out, "/out", i, ".npy")));
    ++k;
  }
  for (int i = 0; i < 3; ++i) {
    ASSERT_GT(outputs[0][i].size(), x.size() * sizeof(float)) << i;
    EXPECT_TRUE(outputs[0][i] == outputs[1][i]) << "output " << i << " differs between the forms";
  }
}

}  // namespace
}  // namespace sharc::codegen
