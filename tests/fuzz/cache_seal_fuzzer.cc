// libFuzzer target for the kernel cache's trailer check (codegen/
// cache_seal.h): a cached kernel library is read back from disk, where a
// killed writer or a bad disk may have left any bytes. Unseal must return
// DataLoss for anything that is not some object followed by its own trailer,
// and give that object back otherwise; any input sealed is given back whole.
// A crash, a sanitizer report, another error code or a wrong object is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "codegen/cache_seal.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::codegen::SealTrailer;
  using sharc::codegen::Unseal;
  constexpr char kFuzzer[] = "cache_seal_fuzzer";
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto object = Unseal(bytes, "<fuzz>");
  if (object.ok()) {
    FUZZ_CHECK(absl::StrCat(*object, SealTrailer(*object)) == bytes, kFuzzer,
               "accepted bytes that are not an object and its trailer",
               std::to_string(size) + " bytes");
  } else {
    FUZZ_CHECK(object.status().code() == absl::StatusCode::kDataLoss, kFuzzer,
               "damage is not DataLoss", object.status().ToString());
  }
  auto sealed = Unseal(absl::StrCat(bytes, SealTrailer(bytes)), "<fuzz>");
  FUZZ_CHECK(sealed.ok() && *sealed == bytes, kFuzzer, "sealed bytes do not come back",
             std::to_string(size) + " bytes");
  return 0;
}
