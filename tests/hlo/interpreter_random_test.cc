// Differential test of the reference interpreter: random programs generated
// by tests/hlo/random_programs.py come with results computed by NumPy, an
// independent implementation. Set SHARC_RANDOM_PROGRAMS=N for a longer run.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "runtime/npy.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

namespace fs = std::filesystem;

int ProgramCount() {
  const char* env = std::getenv("SHARC_RANDOM_PROGRAMS");
  return env != nullptr ? std::atoi(env) : 300;
}

bool HaveNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Float results must agree to a tolerance (libm and NumPy differ in the last
// bits of tanh, exp...; reductions associate differently).
void ExpectClose(const Literal& expected, const Literal& actual, const std::string& where) {
  ASSERT_EQ(expected.shape().ToString(), actual.shape().ToString()) << where;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (std::isinf(e) && e == a) continue;
    ASSERT_NEAR(e, a, 1e-4 + 1e-4 * std::fabs(e)) << where << " element " << i;
  }
}

TEST(InterpreterRandomTest, MatchesNumpyOnRandomPrograms) {
  if (!HaveNumpy()) {
    FAIL() << "/usr/bin/python3 with numpy is needed to generate the reference results "
                    "(scripts/install_deps.sh installs python3-numpy)";
  }
  fs::path dir = fs::temp_directory_path() / ("sharc_random_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const int count = ProgramCount();
  std::string cmd = "/usr/bin/python3 " SHARC_SOURCE_DIR "/tests/hlo/random_programs.py " +
                    dir.string() + " " + std::to_string(count) + " 20261121";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  for (int i = 0; i < count; ++i) {
    std::string prefix = (dir / ("prog_" + std::to_string(i))).string();
    std::string text = ReadFile(prefix + ".hlo");
    ParseOptions options;
    options.filename = prefix + ".hlo";
    ASSERT_OK_AND_ASSIGN(auto module, ParseAndVerifyModule(text, options));
    std::vector<Literal> args;
    for (int j = 0; fs::exists(prefix + "_arg_" + std::to_string(j) + ".npy"); ++j) {
      ASSERT_OK_AND_ASSIGN(Literal arg,
                           runtime::ReadNpyFile(prefix + "_arg_" + std::to_string(j) + ".npy"));
      args.push_back(std::move(arg));
    }
    ASSERT_OK_AND_ASSIGN(Literal result, Evaluate(*module, args));
    ASSERT_TRUE(result.is_tuple()) << options.filename;
    for (int k = 0; k < static_cast<int>(result.elements().size()); ++k) {
      ASSERT_OK_AND_ASSIGN(Literal expected,
                           runtime::ReadNpyFile(prefix + "_out_" + std::to_string(k) + ".npy"));
      ExpectClose(expected, result.elements()[k], options.filename + " output " +
                                                      std::to_string(k) + "\n" + text);
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sharc::hlo
