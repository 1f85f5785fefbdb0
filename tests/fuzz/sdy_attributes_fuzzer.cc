// libFuzzer target for the Shardy attribute readers (hlo/text/parse_sdy.h,
// hlo/text/frontend_attributes.h) and the Shardy-to-XLA sharding conversion
// (hlo/ir/sdy_sharding.h), which read what JAX writes into HLO text. The
// input is read as frontend attributes, a mesh dictionary, a sharding list
// and manual axes. Any input must either be rejected with a status or, for
// a sharding over the fixed mesh ["x"=2, "y"=4, "z"=2] (with and without
// the manual axes read), convert to an XLA sharding that uses each of the
// mesh's 16 devices exactly once; a crash, a sanitizer report or a sharding
// that loses or repeats a device is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/ir/sdy_sharding.h"
#include "hlo/ir/shape.h"
#include "hlo/text/frontend_attributes.h"
#include "hlo/text/parse_sdy.h"
#include "tests/fuzz/fuzz_checks.h"

namespace {

constexpr char kFuzzer[] = "sdy_attributes_fuzzer";

void CheckConversion(const sharc::hlo::SdyTensorSharding& sharding,
                     const std::vector<std::string>& manual_axes, std::string_view input) {
  sharc::hlo::SdyMesh mesh;
  mesh.axes = {{"x", 2}, {"y", 4}, {"z", 2}};
  auto converted = sharc::hlo::SdyToHloSharding(sharding, mesh, manual_axes);
  if (!converted.ok() || !converted->IsTiled()) return;
  std::vector<int64_t> dims(static_cast<size_t>(converted->TiledDataRank()), 64);
  const auto shape = sharc::hlo::Shape(sharc::hlo::PrimitiveType::kF32, dims);
  const absl::Status fits = converted->Validate(shape, mesh.num_devices());
  FUZZ_CHECK(fits.ok(), kFuzzer, "a converted sharding does not use each mesh device once",
             std::string(input) + "\n" + converted->ToString() + "\n" + fits.ToString());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)sharc::hlo::ParseFrontendAttributes(text);
  (void)sharc::hlo::ParseSdyMeshes(text);
  auto manual = sharc::hlo::ParseSdyManualAxes(text);
  auto shardings = sharc::hlo::ParseSdyShardings(text);
  if (!shardings.ok()) return 0;
  for (const sharc::hlo::SdyTensorSharding& sharding : *shardings) {
    CheckConversion(sharding, {}, text);
    CheckConversion(sharding, {"y"}, text);
    if (manual.ok()) CheckConversion(sharding, *manual, text);
  }
  return 0;
}
