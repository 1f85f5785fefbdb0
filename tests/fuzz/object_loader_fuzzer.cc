// libFuzzer target for what reads files from the kernel cache: the
// trailer check (codegen/cache_seal.h) and sharc's in-process linker of
// kernel objects (codegen/object_loader.h). Any input must be accepted or
// refused with a status; a crash or a sanitizer report is a bug. Nothing
// linked is run: its code is arbitrary.
#include <cstddef>
#include <cstdint>

#include "codegen/cache_seal.h"
#include "codegen/object_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)sharc::codegen::Unseal(bytes, "<fuzz>");
  auto linked = sharc::codegen::LoadedObject::Link(bytes, "<fuzz>");
  if (linked.ok()) (void)(*linked)->Symbol("f");
  return 0;
}
