// The properties the fuzz targets check beyond "no crash" (which the
// sanitizers check). A broken property prints what broke and the
// input-derived detail, then traps so libFuzzer saves the input as a crash
// reproducer.
#pragma once

#include <cstdio>
#include <string>

namespace sharc::fuzz {

[[noreturn]] inline void Fail(const char* fuzzer, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n%s\n", fuzzer, what, detail.c_str());
  __builtin_trap();
}

// `value` came from `parse`: the text `print` gives for it must parse back to
// an equal value, so that printing never loses or changes what was read.
template <typename T, typename ParseFn, typename PrintFn>
void CheckRoundTrip(const char* fuzzer, const T& value, ParseFn parse, PrintFn print) {
  const std::string printed = print(value);
  auto reparsed = parse(printed);
  if (!reparsed.ok()) {
    Fail(fuzzer, "printed text does not parse",
         printed + "\n" + std::string(reparsed.status().message()));
  }
  if (!(*reparsed == value)) {
    Fail(fuzzer, "value changed in a print/parse round trip",
         printed + "\n---\n" + print(*reparsed));
  }
}

}  // namespace sharc::fuzz
