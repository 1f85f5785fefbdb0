// Loads a kernel's relocatable object (x86-64 ELF, as LLVM writes it) into
// this process and links it in place: its sections are copied into fresh
// pages, its relocations applied, and the symbols it leaves undefined (the
// Halide runtime's entry points, libm) resolved against the process with
// dlsym. This replaces `ld -shared` and dlopen, which cost about 6 ms of an
// elementwise kernel's 45 ms cold compile, most of it starting `ld`
// (docs/performance_log.md).
//
// Only what LLVM's x86-64 back end emits for position-independent code in
// the small code model is accepted; anything else (another machine, an
// unknown relocation, a common or thread-local symbol, a constructor) is an
// error naming what, never a half-linked image. Calls to symbols outside the
// image go through an 8-byte slot and a jump stub inside it, as a PLT would,
// since the process's libraries are further away than a 32-bit displacement
// reaches. Reads no more than the bytes given: a corrupt cache file is an
// error, not a crash (tests/fuzz/object_loader_fuzzer.cc).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace sharc::codegen {

class LoadedObject {
 public:
  // Links `bytes`, an ELF relocatable object; `name` (its path) is used in
  // errors only. Errors: DataLoss for malformed bytes (a damaged file),
  // Unimplemented for what this linker does not take, FailedPrecondition
  // for an undefined symbol the process lacks, ResourceExhausted when no
  // memory.
  static absl::StatusOr<std::unique_ptr<LoadedObject>> Link(absl::string_view bytes,
                                                            absl::string_view name);

  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;

  // The address of a global symbol the object defines, or nullptr.
  void* Symbol(absl::string_view name) const;
  // Every function the object defines (local ones too), where it landed.
  struct Function {
    std::string name;
    const void* address = nullptr;
    size_t size = 0;
  };
  const std::vector<Function>& functions() const { return functions_; }
  // Bytes mapped for the image (code, data, stubs and slots, page-rounded).
  size_t mapped_bytes() const { return size_; }

 private:
  LoadedObject(void* image, size_t size) : image_(image), size_(size) {}

  void* image_;
  size_t size_;
  absl::flat_hash_map<std::string, void*> symbols_;
  std::vector<Function> functions_;
};

// True where LoadedObject can link this process's kernels (an x86-64 Linux
// build); elsewhere kernels are linked with `ld -shared` and dlopen'd.
constexpr bool LinksObjectsInProcess() {
#if defined(__x86_64__) && defined(__linux__)
  return true;
#else
  return false;
#endif
}

}  // namespace sharc::codegen
