// End-to-end tests of the `sharc` binary (SHARC_BINARY): exit codes,
// diagnostics, fmt's fixed point and `run` with .npy inputs and outputs.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hlo/ir/literal.h"
#include "runtime/npy.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::tools {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("sharc_cli_test_", ::getpid(), "_", info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::string WriteFile(const std::string& name, const std::string& text) const {
    std::string path = Path(name);
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Runs `sharc ARGS` through the shell (ARGS may contain redirections).
  CommandResult Sharc(const std::string& args) const {
    std::string out = Path("stdout.txt");
    std::string err = Path("stderr.txt");
    std::string command = absl::StrCat(SHARC_BINARY, " ", args, " >", out, " 2>", err);
    int status = std::system(command.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = ReadFile(out);
    result.err = ReadFile(err);
    return result;
  }

  std::filesystem::path dir_;
};

constexpr char kElementwise[] = R"(HloModule elementwise_test

ENTRY %main {
  %x = f32[2,3] parameter(0)
  %y = f32[2,3] parameter(1)
  %sum = f32[2,3] add(%x, %y)
  ROOT %out = f32[2,3] multiply(%sum, %x)
}
)";

constexpr char kTupleResult[] = R"(HloModule tuple_test

ENTRY %main {
  %x = s32[4] parameter(0)
  %neg = s32[4] negate(%x)
  %big = f32[100] iota(), iota_dimension=0
  %inner = (s32[4], f32[100]) tuple(%neg, %big)
  ROOT %t = (s32[4], (s32[4], f32[100])) tuple(%x, %inner)
}
)";

TEST_F(CliTest, HelpListsCommands) {
  CommandResult r = Sharc("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("verify"));
  EXPECT_THAT(r.out, HasSubstr("fmt"));
  EXPECT_THAT(r.out, HasSubstr("run"));
  EXPECT_THAT(r.out, HasSubstr("Exit codes"));
  for (const char* command : {"verify", "fmt", "run"}) {
    CommandResult help = Sharc(absl::StrCat(command, " --help"));
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_THAT(help.out, HasSubstr(absl::StrCat("usage: sharc ", command)));
  }
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  std::string module = WriteFile("m.hlo", kElementwise);
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "usage: sharc COMMAND"},
           {"frobnicate", "unknown command 'frobnicate'"},
           {"verify --bogus " + module, "unknown flag '--bogus'"},
           {"verify a.hlo b.hlo", "at most one FILE"},
           {"run", "exactly one FILE"},
           {"run " + module + " --backend gpu --random-inputs", "unknown backend 'gpu'"},
           {"run " + module + " --devices 0 --random-inputs", "--devices"},
           {"run " + module + " --devices two --random-inputs", "expects an integer"},
           {"run " + module + " --output-dir", "needs a value"},
           {"run " + module + " --random-inputs --input x.npy", "cannot be combined"},
           {"run " + module, "--random-inputs"},
       }) {
    CommandResult r = Sharc(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args;
  }
}

TEST_F(CliTest, VerifyAcceptsValidModuleSilently) {
  std::string module = WriteFile("ok.hlo", kElementwise);
  CommandResult r = Sharc("verify " + module);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_EQ(Sharc("verify < " + module).exit_code, 0);
  EXPECT_EQ(Sharc("verify - < " + module).exit_code, 0);
}

TEST_F(CliTest, VerifyReportsSyntaxErrorsWithLocation) {
  std::string module = WriteFile("bad.hlo",
                                 "HloModule bad\n\nENTRY %main {\n"
                                 "  %x = f32[4] parameter(0)\n"
                                 "  ROOT %y = f32[4] add(%x, %x\n"
                                 "}\n");
  CommandResult r = Sharc("verify " + module);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(module + ":"));
  EXPECT_THAT(r.err, HasSubstr(": error: "));
  EXPECT_THAT(r.out, IsEmpty());
  // Through stdin the file is called <stdin>.
  CommandResult piped = Sharc("verify < " + module);
  EXPECT_EQ(piped.exit_code, 1);
  EXPECT_THAT(piped.err, HasSubstr("<stdin>:"));
}

TEST_F(CliTest, VerifyReportsUndefinedNameAtItsLine) {
  std::string module = WriteFile("undef.hlo",
                                 "HloModule undef\n\nENTRY %main {\n"
                                 "  %x = f32[4] parameter(0)\n"
                                 "  ROOT %y = f32[4] add(%x, %nope)\n"
                                 "}\n");
  CommandResult r = Sharc("verify " + module);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(module + ":5:"));
  EXPECT_THAT(r.err, HasSubstr("nope"));
}

TEST_F(CliTest, VerifyReportsShapeErrorsNamingTheInstruction) {
  std::string module = WriteFile("shape.hlo",
                                 "HloModule shape\n\nENTRY %main {\n"
                                 "  %x = f32[4] parameter(0)\n"
                                 "  ROOT %wrong = f32[5] negate(%x)\n"
                                 "}\n");
  CommandResult r = Sharc("verify " + module);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(module));
  EXPECT_THAT(r.err, HasSubstr("wrong"));
  EXPECT_THAT(r.err, HasSubstr("error"));
}

TEST_F(CliTest, VerifyRefusesMissingFilesDirectoriesAndGarbage) {
  CommandResult missing = Sharc("verify " + Path("missing.hlo"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no such file"));
  CommandResult dir = Sharc("verify " + dir_.string());
  EXPECT_EQ(dir.exit_code, 1);
  EXPECT_THAT(dir.err, HasSubstr("directory"));
  std::string garbage(256, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 37 + 11);
  CommandResult bin = Sharc("verify " + WriteFile("garbage.hlo", garbage));
  EXPECT_EQ(bin.exit_code, 1);
  CommandResult empty = Sharc("verify " + WriteFile("empty.hlo", ""));
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_THAT(empty.err, HasSubstr("empty.hlo"));
}

TEST_F(CliTest, FmtIsAFixedPoint) {
  std::vector<std::string> modules = {
      WriteFile("elementwise.hlo", kElementwise),
      WriteFile("tuple.hlo", kTupleResult),
      std::string(SHARC_SOURCE_DIR) + "/examples/sharded_matmul.hlo",
      std::string(SHARC_SOURCE_DIR) + "/examples/elementwise.hlo",
  };
  for (const std::string& module : modules) {
    CommandResult first = Sharc("fmt " + module);
    ASSERT_EQ(first.exit_code, 0) << module << "\n" << first.err;
    EXPECT_THAT(first.out, HasSubstr("HloModule"));
    std::string again = WriteFile("again.hlo", first.out);
    CommandResult second = Sharc("fmt " + again);
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_EQ(second.out, first.out) << module;
    CommandResult piped = Sharc("fmt - < " + again);
    EXPECT_EQ(piped.out, first.out);
  }
}

TEST_F(CliTest, FmtRefusesInvalidModules) {
  std::string module = WriteFile("shape.hlo",
                                 "HloModule shape\n\nENTRY %main {\n"
                                 "  %x = f32[4] parameter(0)\n"
                                 "  ROOT %wrong = f32[5] negate(%x)\n"
                                 "}\n");
  CommandResult r = Sharc("fmt " + module);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, IsEmpty());
  CommandResult unverified = Sharc("fmt --no-verify " + module);
  EXPECT_EQ(unverified.exit_code, 0) << unverified.err;
  EXPECT_THAT(unverified.out, HasSubstr("%wrong = f32[5] negate(%x)"));
}

TEST_F(CliTest, RunReadsNpyInputsAndWritesNpyOutputs) {
  std::string module = WriteFile("m.hlo", kElementwise);
  hlo::Literal x = hlo::Literal::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  hlo::Literal y = hlo::Literal::FromValues<float>({2, 3}, {0.5, -2, 0, 1, 1, -6});
  ASSERT_OK(runtime::WriteNpyFile(Path("x.npy"), x));
  ASSERT_OK(runtime::WriteNpyFile(Path("y.npy"), y));
  CommandResult r = Sharc(absl::StrCat("run ", module, " --input ", Path("x.npy"),
                                       " --input=", Path("y.npy"), " --output-dir ",
                                       Path("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("out0 = f32[2,3]\n    {{1.5, 0, 9},\n     {20, 30, 0}}\n"));
  ASSERT_OK_AND_ASSIGN(hlo::Literal out, runtime::ReadNpyFile(Path("out/out0.npy")));
  EXPECT_EQ(out, hlo::Literal::FromValues<float>({2, 3}, {1.5, 0, 9, 20, 30, 0}));
  EXPECT_FALSE(std::filesystem::exists(Path("out/out1.npy")));
}

TEST_F(CliTest, RunFlattensTupleResults) {
  std::string module = WriteFile("t.hlo", kTupleResult);
  ASSERT_OK(runtime::WriteNpyFile(Path("x.npy"), hlo::Literal::Vector<int32_t>({1, -2, 3, 0})));
  CommandResult r = Sharc(absl::StrCat("run ", module, " --input ", Path("x.npy"),
                                       " --output-dir ", Path("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("out0 = s32[4] {1, -2, 3, 0}"));
  EXPECT_THAT(r.out, HasSubstr("out1 = s32[4] {-1, 2, -3, 0}"));
  // 100 elements: a prefix and statistics instead of every value.
  EXPECT_THAT(r.out, HasSubstr("out2 = f32[100] first 8: {0, 1, 2, 3, 4, 5, 6, 7, ...} "
                               "min=0 max=99 mean=49.5"));
  ASSERT_OK_AND_ASSIGN(hlo::Literal out1, runtime::ReadNpyFile(Path("out/out1.npy")));
  EXPECT_EQ(out1, hlo::Literal::Vector<int32_t>({-1, 2, -3, 0}));
  ASSERT_OK_AND_ASSIGN(hlo::Literal out2, runtime::ReadNpyFile(Path("out/out2.npy")));
  EXPECT_EQ(out2.shape().ToString(), "f32[100]");
}

TEST_F(CliTest, RunRejectsMismatchedInputs) {
  std::string module = WriteFile("m.hlo", kElementwise);
  hlo::Literal good = hlo::Literal::FromValues<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_OK(runtime::WriteNpyFile(Path("good.npy"), good));
  ASSERT_OK(runtime::WriteNpyFile(Path("f64.npy"),
                                  hlo::Literal::FromValues<double>({2, 3}, {1, 2, 3, 4, 5, 6})));
  ASSERT_OK(runtime::WriteNpyFile(Path("long.npy"),
                                  hlo::Literal::Vector<float>({1, 2, 3, 4, 5, 6})));
  WriteFile("junk.npy", "not numpy at all");

  CommandResult count = Sharc("run " + module + " --input " + Path("good.npy"));
  EXPECT_EQ(count.exit_code, 1);
  EXPECT_THAT(count.err, HasSubstr("takes 2 parameter(s)"));
  EXPECT_THAT(count.err, HasSubstr("1 --input file(s)"));

  CommandResult dtype =
      Sharc("run " + module + " --input " + Path("good.npy") + " --input " + Path("f64.npy"));
  EXPECT_EQ(dtype.exit_code, 1);
  EXPECT_THAT(dtype.err, HasSubstr("parameter 1 (%y)"));
  EXPECT_THAT(dtype.err, HasSubstr("f64.npy"));
  EXPECT_THAT(dtype.err, HasSubstr("f32[2,3] is expected"));

  CommandResult shape =
      Sharc("run " + module + " --input " + Path("long.npy") + " --input " + Path("good.npy"));
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_THAT(shape.err, HasSubstr("holds f32[6]"));

  CommandResult junk =
      Sharc("run " + module + " --input " + Path("junk.npy") + " --input " + Path("good.npy"));
  EXPECT_EQ(junk.exit_code, 1);
  EXPECT_THAT(junk.err, HasSubstr("bad magic"));

  CommandResult missing =
      Sharc("run " + module + " --input " + Path("nope.npy") + " --input " + Path("good.npy"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nope.npy"));
}

TEST_F(CliTest, RunRandomInputsAreDeterministic) {
  std::string module = WriteFile("m.hlo", kElementwise);
  CommandResult a = Sharc("run " + module + " --random-inputs");
  CommandResult b = Sharc("run " + module + " --random-inputs=0");
  CommandResult c = Sharc("run " + module + " --random-inputs=7");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_THAT(a.err, HasSubstr("random inputs (seed 0)"));
}

TEST_F(CliTest, RunOnDevicesMatchesTheGlobalRun) {
  const std::string example = std::string(SHARC_SOURCE_DIR) + "/examples/sharded_matmul.hlo";
  CommandResult global = Sharc("run " + example + " --random-inputs=3 --output-dir " +
                               Path("global"));
  CommandResult sharded = Sharc("run " + example + " --devices 2 --random-inputs=3 --output-dir " +
                                Path("sharded"));
  ASSERT_EQ(global.exit_code, 0) << global.err;
  ASSERT_EQ(sharded.exit_code, 0) << sharded.err;
  EXPECT_THAT(sharded.err, HasSubstr("partitioning for 2 devices"));
  EXPECT_THAT(sharded.out, HasSubstr("out0 = f32[8,4]"));
  EXPECT_THAT(sharded.out, HasSubstr("out1 = f32[8]"));
  for (const char* name : {"out0.npy", "out1.npy"}) {
    ASSERT_OK_AND_ASSIGN(hlo::Literal want, runtime::ReadNpyFile(Path("global/") + name));
    ASSERT_OK_AND_ASSIGN(hlo::Literal got, runtime::ReadNpyFile(Path("sharded/") + name));
    ASSERT_EQ(want.shape(), got.shape());
    for (int64_t i = 0; i < want.num_elements(); ++i) {
      EXPECT_NEAR(want.GetAsDouble(i), got.GetAsDouble(i), 1e-5) << name << " element " << i;
    }
  }
}

TEST_F(CliTest, RunOnDevicesReportsPartitioningErrors) {
  CommandResult r = Sharc(std::string("run ") + SHARC_SOURCE_DIR +
                          "/examples/sharded_matmul.hlo --devices 3 --random-inputs");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // The annotations are checked against the device count before anything runs.
  EXPECT_THAT(r.err, HasSubstr("uses 2 devices but the module has 3"));
  EXPECT_THAT(r.err, HasSubstr("sharded_matmul.hlo:"));
}

// A bf16 dot split along its contracting dim rounds each device's partial
// sum to bf16 and adds them in another order: about 0.5% off the global
// result, which --check must accept for bf16 (it used f32's 1e-4).
TEST_F(CliTest, RunCheckToleranceFollowsTheDtype) {
  std::string path = WriteFile("bf16_dot.hlo", R"(HloModule bf16_dot, num_partitions=8

ENTRY %main {
  %a = bf16[4,256] parameter(0), sharding={devices=[1,8]0,1,2,3,4,5,6,7}
  %b = bf16[256,4] parameter(1), sharding={devices=[8,1]0,1,2,3,4,5,6,7}
  ROOT %d = bf16[4,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)");
  CommandResult r =
      Sharc("run " + path + " --devices 8 --random-inputs --check --backend interpreter");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("check: the partitioned run matches the global program"));
}

// A manual region's values differ per device and have no global value:
// --check compares with the per-device reference (the region kept, every
// other value replicated, on the interpreter's kernels). Here the values
// around the region are split otherwise than its entry and exit, and the
// region rotates its shards with a collective-permute, so a reference that
// took the global program (the tile at offset 0) would differ.
TEST_F(CliTest, RunCheckComparesManualRegionsWithThePerDeviceReference) {
  std::string path = WriteFile("manual.hlo", R"(HloModule manual, num_partitions=4

ENTRY %main {
  %x = f32[8,2] parameter(0), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  %e = f32[8,2] exponential(%x), sharding={devices=[4,1]<=[4]}
  %m = f32[2,2] custom-call(%e), custom_call_target="SPMDFullToShardShape", sharding={manual}
  %n = f32[2,2] negate(%m), sharding={manual}
  %p = f32[2,2] collective-permute(%n), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}, sharding={manual}
  %y = f32[8,2] custom-call(%p), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
  ROOT %z = f32[8,2] add(%y, %x), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}
}
)");
  CommandResult r = Sharc("run " + path + " --devices 4 --random-inputs --check");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("check: the partitioned run matches the per-device reference"));
}

// --check-reference=compiled compares with the global program compiled for
// one device (large convolutions and dots take the interpreter minutes);
// a misspelt reference is a usage error naming the flag.
TEST_F(CliTest, RunCheckAgainstTheCompiledGlobalProgram) {
  std::string path = WriteFile("dot.hlo", R"(HloModule dot, num_partitions=2

ENTRY %main {
  %a = f32[8,6] parameter(0), sharding={devices=[1,2]0,1}
  %b = f32[6,4] parameter(1), sharding={devices=[2,1]0,1}
  ROOT %d = f32[8,4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[2,1]0,1}
}
)");
  CommandResult r =
      Sharc("run " + path + " --devices 2 --random-inputs --check --check-reference compiled");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("matches the global program compiled for one device"));
  r = Sharc("run " + path + " --devices 2 --random-inputs --check --check-reference halide");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--check-reference: expected auto, interpreter or compiled, got 'halide'"));
}

// A cross-partition collective of the program itself (outside manual
// regions) runs on every device's copy of its operand: --check compares
// with the per-device reference, everything replicated and the collective
// kept. One without a channel_id is cross-replica, over the one replica:
// the identity in both runs, compared with the global program (XLA's
// TiledAllReduce keeps such an all-reduce of each device's shard as it is).
// partition-id has no reference.
TEST_F(CliTest, RunCheckComparesTheProgramsCollectivesWithThePerDeviceReference) {
  auto module = [](const std::string& op, const std::string& attrs) {
    return absl::StrCat(R"(HloModule all_reduce, num_partitions=2

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main {
  %x = f32[4,2] parameter(0), sharding={devices=[2,1]0,1}
  %r = f32[4,2] )", op, attrs, R"(, sharding={devices=[2,1]0,1}
  %id = u32[] partition-id()
  ROOT %t = (f32[4,2], u32[]) tuple(%r, %id)
}
)");
  };
  const std::string ar = "all-reduce(%x), replica_groups={}, to_apply=%sum";
  auto strip_id = [](std::string text) {
    return absl::StrReplaceAll(text, {{"  %id = u32[] partition-id()\n", ""},
                                      {"(f32[4,2], u32[]) tuple(%r, %id)", "(f32[4,2]) tuple(%r)"}});
  };
  std::string across = WriteFile("all_reduce.hlo", strip_id(module(ar, ", channel_id=1")));
  std::string replicas = WriteFile("cross_replica.hlo", strip_id(module(ar, "")));
  for (const char* backend : {"halide", "interpreter"}) {
    CommandResult a = Sharc(absl::StrCat("run ", across, " --devices 2 --random-inputs --check",
                                         " --backend ", backend));
    EXPECT_EQ(a.exit_code, 0) << a.err;
    EXPECT_THAT(a.err, HasSubstr("check: the partitioned run matches the per-device reference"));
    CommandResult c = Sharc(absl::StrCat("run ", replicas, " --devices 2 --random-inputs --check",
                                         " --backend ", backend));
    EXPECT_EQ(c.exit_code, 0) << c.err;
    EXPECT_THAT(c.err, HasSubstr("check: the partitioned run matches the global program"));
  }
  std::string id = WriteFile("partition_id.hlo", module(ar, ""));
  CommandResult r = Sharc("run " + id + " --devices 2 --random-inputs --check");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unsupported: --check has no global reference for %id (partition-id)"));
}

// NumPy has no bf16: --output-dir writes it as f32 (exactly) and says so,
// and --input reads it back from that file.
TEST_F(CliTest, RunWritesBf16OutputsAsF32AndReadsThemBack) {
  std::string module = WriteFile("bf.hlo",
                                 "HloModule bf\n\nENTRY %main {\n"
                                 "  %x = bf16[2] parameter(0)\n"
                                 "  ROOT %y = bf16[2] add(%x, %x)\n"
                                 "}\n");
  CommandResult saved = Sharc("run " + module + " --random-inputs --output-dir " + Path("out"));
  EXPECT_EQ(saved.exit_code, 0) << saved.err;
  EXPECT_THAT(saved.err, HasSubstr("note: out0 is bf16, written as f32 (NumPy has no bf16)"));
  CommandResult again = Sharc("run " + module + " --input " + Path("out/out0.npy") +
                              " --output-dir " + Path("again"));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  ASSERT_OK_AND_ASSIGN(hlo::Literal first, runtime::ReadNpyFile(Path("out/out0.npy")));
  ASSERT_OK_AND_ASSIGN(hlo::Literal second, runtime::ReadNpyFile(Path("again/out0.npy")));
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(second.GetAsDouble(i), 2 * first.GetAsDouble(i));
}

TEST_F(CliTest, RunRefusesValuesLargerThanMemory) {
  std::string module = WriteFile("huge.hlo",
                                 "HloModule huge\n\nENTRY %main {\n"
                                 "  ROOT %big = f32[1000000,1000000] iota(), iota_dimension=0\n"
                                 "}\n");
  CommandResult r = Sharc("run " + module);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("%big (f32[1000000,1000000]) needs 4000000000000 bytes"));
}

TEST_F(CliTest, ExamplesVerify) {
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SHARC_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".hlo") continue;
    CommandResult r = Sharc("verify " + entry.path().string());
    EXPECT_EQ(r.exit_code, 0) << entry.path() << "\n" << r.err;
  }
}

}  // namespace
}  // namespace sharc::tools
