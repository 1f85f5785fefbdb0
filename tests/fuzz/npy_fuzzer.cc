// libFuzzer target for the .npy reader (`sharc run --input x.npy`, --infeed):
// bytes from a file are untrusted. Any input must either be rejected with a
// status or decode into an array whose encoding is a fixed point: decoding
// EncodeNpy's output gives the same shape, and encoding that again gives the
// same bytes. Anything else (a crash, a sanitizer report, an allocation the
// file's size does not pay for, a round trip that changes the array) is a
// bug. Bytes, not Literal ==, are compared so that NaN payloads count too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "runtime/npy.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::runtime::DecodeNpy;
  using sharc::runtime::EncodeNpy;
  constexpr char kFuzzer[] = "npy_fuzzer";
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto literal = DecodeNpy(bytes, "<fuzz>");
  if (!literal.ok()) return 0;
  // Every array DecodeNpy returns has a NumPy dtype, so it can be written.
  auto encoded = EncodeNpy(*literal);
  FUZZ_CHECK(encoded.ok(), kFuzzer, "a decoded array does not encode",
             std::string(encoded.status().message()));
  // Reading back with the shape as the expected one also checks `expected`.
  auto decoded = DecodeNpy(*encoded, "<encoded>", literal->shape());
  FUZZ_CHECK(decoded.ok(), kFuzzer, "an encoded array does not decode",
             std::string(decoded.status().message()));
  auto reencoded = EncodeNpy(*decoded);
  FUZZ_CHECK(reencoded.ok() && *reencoded == *encoded, kFuzzer,
             "encode(decode(encode(a))) != encode(a)", literal->shape().ToString());
  return 0;
}
