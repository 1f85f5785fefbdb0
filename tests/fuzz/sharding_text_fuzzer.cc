// libFuzzer target for driver::ParseShardingForValue and SetModuleMesh, which
// read the shardings and meshes the C API and the Python package are given:
// HLO sharding text or a partition spec over the module's named mesh.
// The input is three parts, one a line: the mesh ("x=2,y=2"; none if it does
// not parse), the value's shape ("f32[8,4]") and the sharding text. Any input
// must either be rejected with a status or give a sharding that fits the
// shape and whose HLO text reads back as the same sharding; a crash, a
// sanitizer report or a changed sharding is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "driver/sharding_text.h"
#include "hlo/ir/module.h"
#include "hlo/text/parser.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

constexpr char kFuzzer[] = "sharding_text_fuzzer";

// The text before the first newline of `rest` (all of it if none); `rest`
// keeps what follows the newline.
std::string_view NextLine(std::string_view& rest) {
  size_t end = rest.find('\n');
  std::string_view line = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::driver::ParseShardingForValue;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view mesh_text = NextLine(rest);
  std::string_view shape_text = NextLine(rest);
  sharc::hlo::Module module("fuzz");
  (void)sharc::driver::SetModuleMesh(module, mesh_text);  // a bad mesh leaves none
  auto shape = sharc::hlo::ParseShape(shape_text);
  if (!shape.ok()) return 0;
  auto sharding = ParseShardingForValue(rest, module, *shape, "<fuzz>");
  if (!sharding.ok()) return 0;
  const absl::Status fits = sharding->Validate(*shape, /*num_devices=*/0);
  FUZZ_CHECK(fits.ok(), kFuzzer, "an accepted sharding does not fit its shape", fits.ToString());
  FUZZ_CHECK_ROUND_TRIP(
      kFuzzer, *sharding,
      [&](std::string_view text) { return ParseShardingForValue(text, module, *shape, "<fuzz>"); },
      [](const sharc::hlo::Sharding& s) { return s.ToString(); });
  return 0;
}
