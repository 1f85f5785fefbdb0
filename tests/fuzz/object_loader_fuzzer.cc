// libFuzzer target for what reads files from the kernel cache: the
// trailer check (codegen/cache_seal.h) and sharc's in-process linker of
// kernel objects (codegen/object_loader.h). Any input must be accepted or
// refused with a status, and these must hold (else the target traps, a
// finding like a crash or a sanitizer report):
// - any bytes with their own trailer unseal to themselves;
// - bytes that unseal are exactly the body followed by its trailer;
// - linking is deterministic: the same bytes give the same status code;
// - a linked object lists only functions with an address and a size.
// Nothing linked is run: its code is arbitrary.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "codegen/cache_seal.h"
#include "codegen/object_loader.h"

namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "object_loader_fuzzer: %s\n", what);
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::codegen::LoadedObject;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);

  const std::string sealed = std::string(bytes) + sharc::codegen::SealTrailer(bytes);
  auto round_trip = sharc::codegen::Unseal(sealed, "<fuzz>");
  if (!round_trip.ok() || *round_trip != bytes) Fail("sealed bytes do not unseal to themselves");
  if (auto body = sharc::codegen::Unseal(bytes, "<fuzz>"); body.ok()) {
    if (*body + sharc::codegen::SealTrailer(*body) != bytes) Fail("unsealed body is not the input's");
  }

  auto linked = LoadedObject::Link(bytes, "<fuzz>");
  if (LoadedObject::Link(bytes, "<fuzz>").status().code() != linked.status().code()) {
    Fail("linking the same bytes twice gave different results");
  }
  if (linked.ok()) {
    for (const LoadedObject::Function& f : (*linked)->functions()) {
      if (f.address == nullptr || f.size == 0) Fail("a linked function without address or size");
    }
  }
  return 0;
}
