// Runs every case of ../shared/conformance/propagation: propagate with XLA's
// SPMD settings and compare the named instructions' shardings with XLA's
// answers by meaning (iota forms expanded, replication groups sorted).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hlo/text/parser.h"
#include "spmd/propagation.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::spmd {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CaseFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(SHARC_SHARED_DIR) / "conformance" / "propagation";
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const hlo::Instruction* Find(const hlo::Module& module, const std::string& name) {
  for (const hlo::Computation* comp : module.computations()) {
    if (const hlo::Instruction* inst = comp->FindInstruction(name)) return inst;
  }
  return nullptr;
}

class PropagationConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PropagationConformanceTest, MatchesXla) {
  std::ifstream in(GetParam());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  hlo::ParseOptions options;
  options.filename = GetParam();
  ASSERT_OK_AND_ASSIGN(auto module, hlo::ParseAndVerifyModule(text, options));
  ASSERT_OK_AND_ASSIGN(PropagationResult result, PropagateShardings(*module));
  int checked = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "// EXPECT-NONE:")) {
      std::string name(absl::StripAsciiWhitespace(line));
      const hlo::Instruction* inst = Find(*module, name);
      ASSERT_NE(inst, nullptr) << name;
      EXPECT_FALSE(inst->has_sharding())
          << name << " got " << inst->sharding()->ToString() << "\n" << module->ToString();
      ++checked;
    } else if (absl::ConsumePrefix(&line, "// EXPECT:")) {
      line = absl::StripAsciiWhitespace(line);
      size_t space = line.find(' ');
      std::string name(line.substr(0, space));
      ASSERT_OK_AND_ASSIGN(hlo::Sharding expected,
                           hlo::ParseSharding(std::string(line.substr(space + 1))));
      const hlo::Instruction* inst = Find(*module, name);
      ASSERT_NE(inst, nullptr) << name;
      ASSERT_TRUE(inst->has_sharding()) << name << " has no sharding\n" << module->ToString();
      // Equality is by meaning (device arrays), not by spelling.
      EXPECT_TRUE(*inst->sharding() == expected)
          << "got " << inst->sharding()->ToString() << " expected " << expected.ToString() << " for "
          << name << "\n"
          << *ExplainSharding(*module, result, name) << module->ToString();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0) << "no expectations in " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Corpus, PropagationConformanceTest, ::testing::ValuesIn(CaseFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return "case_" + name;
                         });

}  // namespace
}  // namespace sharc::spmd
