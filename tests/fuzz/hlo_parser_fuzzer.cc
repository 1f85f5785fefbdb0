// libFuzzer target for the HLO text parser. Any input must either be rejected
// with a status or parse into a module whose printed text is a fixed point of
// print(parse(.)); anything else (a crash, a sanitizer report, a printed
// module that does not re-parse or prints differently) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/text/parser.h"
#include "hlo/text/printer.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

constexpr char kFuzzer[] = "hlo_parser_fuzzer";

void CheckModule(std::string_view text) {
  sharc::hlo::ParseOptions options;
  options.filename = "<fuzz>";
  auto module = sharc::hlo::ParseAndVerifyModule(text, options);
  if (!module.ok()) return;
  std::string printed = sharc::hlo::PrintModule(**module);
  auto reparsed = sharc::hlo::ParseAndVerifyModule(printed, options);
  FUZZ_CHECK(reparsed.ok(), kFuzzer, "printed module does not parse",
             std::string(reparsed.status().message()) + "\n" + printed);
  std::string reprinted = sharc::hlo::PrintModule(**reparsed);
  FUZZ_CHECK(reprinted == printed, kFuzzer, "print(parse(print(m))) != print(m)",
             printed + "\n---\n" + reprinted);
}

// The standalone sharding entry point round-trips semantically.
void CheckSharding(std::string_view text) {
  auto sharding = sharc::hlo::ParseSharding(text);
  if (!sharding.ok()) return;
  FUZZ_CHECK_ROUND_TRIP(kFuzzer, *sharding, sharc::hlo::ParseSharding,
                        [](const sharc::hlo::Sharding& s) { return s.ToString(); });
}

// So does the standalone replica-groups entry point.
void CheckReplicaGroups(std::string_view text) {
  auto groups = sharc::hlo::ParseReplicaGroups(text);
  if (!groups.ok()) return;
  FUZZ_CHECK_ROUND_TRIP(kFuzzer, *groups, sharc::hlo::ParseReplicaGroups,
                              [](const sharc::hlo::IntListList& g) {
                                return sharc::hlo::PrintAttributeValue(
                                    g, sharc::hlo::AttrKind::kReplicaGroups);
                              });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckModule(text);
  CheckSharding(text);
  CheckReplicaGroups(text);
  return 0;
}
