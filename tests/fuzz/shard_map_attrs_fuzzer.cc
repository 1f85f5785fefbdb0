// libFuzzer target for the shard_map attribute grammars (hlo/ops/
// shard_map_attrs.h): mesh={i=4, j=2}, in_specs={P(i), P((i,j), None)} and
// axes={i,j}. The HLO parser reaches them only inside a well-formed
// shard_map instruction, so they are fuzzed here directly as well. Any text
// must either be rejected with a status or parse into a value whose printed
// form parses back to the same value; a crash, a sanitizer report or a
// changed value is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hlo/ops/shard_map_attrs.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sharc::hlo;  // NOLINT: the attribute functions and types
  constexpr char kFuzzer[] = "shard_map_attrs_fuzzer";
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto mesh = ParseMeshText(text); mesh.ok()) {
    FUZZ_CHECK_ROUND_TRIP(kFuzzer, *mesh, ParseMeshText, PrintMeshText);
  }
  if (auto specs = ParseSpecsText(text); specs.ok()) {
    FUZZ_CHECK_ROUND_TRIP(kFuzzer, *specs, ParseSpecsText, PrintSpecsText);
  }
  if (auto axes = ParseAxesText(text); axes.ok()) {
    FUZZ_CHECK_ROUND_TRIP(kFuzzer, *axes, ParseAxesText, PrintAxesText);
  }
  return 0;
}
