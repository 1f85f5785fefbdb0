// libFuzzer target for sharc's in-process linker of kernel objects
// (codegen/object_loader.h), which reads files from the kernel cache. Any
// input must be linked or refused with a status; a crash or a sanitizer
// report is a bug. Nothing linked is run: its code is arbitrary.
#include <cstddef>
#include <cstdint>

#include "codegen/object_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto linked = sharc::codegen::LoadedObject::Link(
      absl::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>");
  if (linked.ok()) (void)(*linked)->Symbol("f");
  return 0;
}
