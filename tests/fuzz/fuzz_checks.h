// The properties the fuzz targets check beyond "no crash" (which the
// sanitizers check). A broken property prints what broke and the
// input-derived detail, then traps so libFuzzer saves the input as a crash
// reproducer. Targets state their properties with FUZZ_CHECK and
// FUZZ_CHECK_ROUND_TRIP, which name the failing line.
#pragma once

#include <cstdio>
#include <string>

namespace sharc::fuzz {

[[noreturn]] inline void Fail(const char* fuzzer, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n%s\n", fuzzer, what, detail.c_str());
  __builtin_trap();
}

#define SHARC_FUZZ_STRINGIFY(x) #x
#define SHARC_FUZZ_LINE(x) SHARC_FUZZ_STRINGIFY(x)
#define SHARC_FUZZ_WHERE __FILE__ ":" SHARC_FUZZ_LINE(__LINE__) ": "

// Traps, naming this line, `what` (a string literal) and `detail` (built
// only on failure), unless `condition` holds.
#define FUZZ_CHECK(condition, fuzzer, what, detail)                       \
  do {                                                                    \
    if (!(condition)) ::sharc::fuzz::Fail(fuzzer, SHARC_FUZZ_WHERE what, detail); \
  } while (0)

// `value` came from `parse`: the text `print` gives for it must parse back to
// an equal value, so that printing never loses or changes what was read.
#define FUZZ_CHECK_ROUND_TRIP(fuzzer, value, parse, print) \
  ::sharc::fuzz::CheckRoundTrip(fuzzer, SHARC_FUZZ_WHERE, value, parse, print)

template <typename T, typename ParseFn, typename PrintFn>
void CheckRoundTrip(const char* fuzzer, const char* where, const T& value, ParseFn parse,
                    PrintFn print) {
  const std::string printed = print(value);
  auto reparsed = parse(printed);
  if (!reparsed.ok()) {
    Fail(fuzzer, where, "printed text does not parse:\n" + printed + "\n" +
                            std::string(reparsed.status().message()));
  }
  if (!(*reparsed == value)) {
    Fail(fuzzer, where, "value changed in a print/parse round trip:\n" + printed + "\n---\n" +
                            print(*reparsed));
  }
}

}  // namespace sharc::fuzz
