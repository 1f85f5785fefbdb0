// Internal to codegen/: the kernel cache's files carry a trailer that proves
// them whole. A cached kernel library that lost its tail (a killed writer, a
// full disk) or had a byte changed inside its code would otherwise load and
// run wrong code, silently; with the trailer either is DataLoss, which the
// cache answers by compiling the kernel again (kernel_compiler.cc).
//
// Trailer (24 bytes, after the file's bytes; the dynamic loader ignores it,
// since it maps what the ELF headers name): the magic "sharcobj", the
// length and a 64-bit checksum (FNV-1a over 8-byte words read in the host's
// byte order) of what precedes it, both stored little-endian.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharc::codegen {

// The trailer that seals `object`.
std::string SealTrailer(absl::string_view object);

// Writes `object` and its trailer to the file at `path` (replacing it), so
// the checksum covers the bytes the compiler produced, not bytes read back.
absl::Status WriteSealedFile(const std::string& path, absl::string_view object);

// Writes `object` alone (the system linker's input, which is not cached).
absl::Status WriteUnsealedFile(const std::string& path, absl::string_view object);

// Appends the trailer of the file at `path` (what `ld` wrote) to it.
absl::Status SealFile(const std::string& path);

// OK if the file at `path` ends in a trailer that matches it; NotFound or
// DataLoss as ReadSealedFile. The file is left as it is (dlopen reads it).
absl::Status CheckSealedFile(const std::string& path);

// The object in the sealed file at `path`: NotFound if the file cannot be
// opened (another process may just have removed it), DataLoss if the
// trailer is missing or does not match.
absl::StatusOr<std::string> ReadSealedFile(const std::string& path);

// The same for bytes already read; `name` is used in errors only.
absl::StatusOr<std::string> Unseal(absl::string_view sealed, absl::string_view name);

}  // namespace sharc::codegen
