// Every module of the shared conformance corpus parses, verifies and
// round-trips through the printer (print(parse(print(parse(x)))) ==
// print(parse(x)), and the reparsed module prints identically).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/testlib/status_matchers.h"

namespace sharc::hlo {
namespace {

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const char* sub : {"/conformance/propagation", "/conformance/partition"}) {
    std::filesystem::path dir = std::filesystem::path(SHARC_SHARED_DIR) / (sub + 1);
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ConformanceParseTest, CorpusIsPresent) { EXPECT_GE(CorpusFiles().size(), 20u); }

class ConformanceParseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceParseTest, ParsesVerifiesAndRoundTrips) {
  const std::string& path = GetParam();
  ParseOptions options;
  options.filename = path;
  auto module = ParseAndVerifyModule(ReadFile(path), options);
  ASSERT_THAT(module, ::sharc::testing::IsOk());
  // Every instruction knows where it came from.
  for (Computation* c : (*module)->computations()) {
    for (Instruction* i : c->instructions()) {
      EXPECT_EQ(i->location().file, path);
      EXPECT_GT(i->location().line, 0) << i->name();
    }
  }
  std::string printed = PrintModule(**module);
  auto reparsed = ParseAndVerifyModule(printed);
  ASSERT_THAT(reparsed, ::sharc::testing::IsOk()) << printed;
  EXPECT_EQ(PrintModule(**reparsed), printed);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ConformanceParseTest, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::filesystem::path p(info.param);
                           std::string name =
                               p.parent_path().filename().string() + "_" + p.stem().string();
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sharc::hlo
