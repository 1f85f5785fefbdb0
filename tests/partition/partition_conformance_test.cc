// Runs every case of ../shared/conformance/partition: per-device shapes of
// the named values and the number of each collective must be XLA's, and the
// partitioned program run on simulated devices must compute what the global
// program computes.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/eval/interpreter.h"
#include "hlo/text/parser.h"
#include "hlo/verifier/verifier.h"
#include "spmd/partition/device_values.h"
#include "spmd/partition/partitioner.h"
#include "tests/partition/partition_test_util.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(SHARC_SHARED_DIR) / "conformance" / "partition";
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class PartitionConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PartitionConformanceTest, MatchesXla) {
  std::ifstream in(GetParam());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  hlo::ParseOptions options;
  options.filename = GetParam();
  ASSERT_OK_AND_ASSIGN(auto global, hlo::ParseAndVerifyModule(text, options));
  ASSERT_OK_AND_ASSIGN(auto local, PartitionModule(*global));
  ASSERT_OK(hlo::VerifyModule(*local)) << local->ToString();
  const std::string printed = local->ToString();
  std::string expected_collectives, alt_collectives;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "// EXPECT-SHAPE:")) {
      std::vector<std::string> parts = absl::StrSplit(absl::StripAsciiWhitespace(line), ' ');
      const hlo::Instruction* inst = local->entry()->FindInstruction(parts[0]);
      ASSERT_NE(inst, nullptr) << parts[0] << " not in\n" << printed;
      EXPECT_EQ(inst->shape().ToString(), parts[1]) << parts[0] << "\n" << printed;
    } else if (absl::ConsumePrefix(&line, "// EXPECT-COLLECTIVES:")) {
      expected_collectives = std::string(absl::StripAsciiWhitespace(line));
    } else if (absl::ConsumePrefix(&line, "// ALT-COLLECTIVES:")) {
      alt_collectives = std::string(absl::StripAsciiWhitespace(line));
    }
  }
  std::string counts = testing_util::CollectiveCounts(*local);
  if (!expected_collectives.empty()) {
    EXPECT_TRUE(counts == expected_collectives || counts == alt_collectives)
        << "got " << counts << "\nexpected " << expected_collectives << "\n" << printed;
  }
  // And it computes the same values.
  ASSERT_OK(testing_util::ExpectPartitionedMatchesGlobal(*global, *local, /*seed=*/7));
}

INSTANTIATE_TEST_SUITE_P(Corpus, PartitionConformanceTest, ::testing::ValuesIn(CaseFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return "case_" + name;
                         });

}  // namespace
}  // namespace sharc::spmd
