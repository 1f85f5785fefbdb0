// Kernel cache files proven whole (see cache_seal.h).
#include "codegen/cache_seal.h"

#include <cerrno>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "hlo/base/status_macros.h"

namespace sharc::codegen {
namespace {

constexpr char kMagic[8] = {'s', 'h', 'a', 'r', 'c', 'o', 'b', 'j'};
constexpr size_t kTrailerBytes = 24;

// FNV-1a over 8-byte words (then the tail bytes): a word at a time keeps a
// 30 KiB object's check near 4 microseconds, against about 30 for bytes.
// It guards against damage, not against anyone who means harm.
uint64_t Checksum(absl::string_view bytes) {
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t h = 14695981039346656037ull;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, sizeof(word));
    h = (h ^ word) * kPrime;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<unsigned char>(bytes[i])) * kPrime;
  return h;
}

void PutU64(std::string& out, uint64_t v) {
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
}

uint64_t GetU64(absl::string_view bytes) {
  uint64_t v = 0;
  for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(b)]);
  return v;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open kernel cache file ", path));
  std::ostringstream contents;
  contents << in.rdbuf();
  // Not fail(): an empty file sets it, and is only too short to be sealed.
  if (in.bad()) return absl::InternalError(absl::StrCat("cannot read kernel cache file ", path));
  return contents.str();
}

// The error of a damaged `name` (DataLoss: the cache compiles it again).
absl::Status Damaged(absl::string_view name, absl::string_view why) {
  return absl::DataLossError(absl::StrCat("kernel cache file ", name, " is damaged: ", why));
}

// Checks the trailer of `sealed` and returns the object's length.
absl::StatusOr<size_t> CheckTrailer(absl::string_view sealed, absl::string_view name) {
  if (sealed.size() < kTrailerBytes) return Damaged(name, "shorter than its trailer");
  const absl::string_view trailer = sealed.substr(sealed.size() - kTrailerBytes);
  const absl::string_view body = sealed.substr(0, sealed.size() - kTrailerBytes);
  if (std::memcmp(trailer.data(), kMagic, sizeof(kMagic)) != 0) return Damaged(name, "no trailer");
  if (GetU64(trailer.substr(8)) != body.size()) return Damaged(name, "its length does not match");
  if (GetU64(trailer.substr(16)) != Checksum(body)) return Damaged(name, "its checksum does not match");
  return body.size();
}

}  // namespace

std::string SealTrailer(absl::string_view object) {
  std::string trailer(kMagic, sizeof(kMagic));
  PutU64(trailer, object.size());
  PutU64(trailer, Checksum(object));
  return trailer;
}

namespace {

// Replaces the file at `path` with `parts`, one after the other. The error
// names the call that failed with its errno (std::ofstream does not keep it).
absl::Status WriteParts(const std::string& path, std::initializer_list<absl::string_view> parts) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  }
  for (absl::string_view part : parts) {
    if (std::fwrite(part.data(), 1, part.size(), f) != part.size()) {
      const int error = errno;
      std::fclose(f);
      return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
    }
  }
  if (std::fclose(f) != 0) {
    return absl::InternalError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteSealedFile(const std::string& path, absl::string_view object) {
  return WriteParts(path, {object, SealTrailer(object)});
}

absl::Status WriteUnsealedFile(const std::string& path, absl::string_view object) {
  return WriteParts(path, {object});
}

absl::StatusOr<std::string> Unseal(absl::string_view sealed, absl::string_view name) {
  ASSIGN_OR_RETURN(size_t length, CheckTrailer(sealed, name));
  return std::string(sealed.substr(0, length));
}

absl::StatusOr<std::string> ReadSealedFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  ASSIGN_OR_RETURN(size_t length, CheckTrailer(bytes, path));
  bytes.resize(length);  // no second copy of the object
  return bytes;
}

absl::Status SealFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (f == nullptr) {
    return absl::InternalError(absl::StrCat("cannot append to ", path, ": ", std::strerror(errno)));
  }
  const std::string trailer = SealTrailer(bytes);
  const bool written = std::fwrite(trailer.data(), 1, trailer.size(), f) == trailer.size();
  const int error = errno;
  if (std::fclose(f) != 0 || !written) {
    return absl::InternalError(absl::StrCat("cannot seal ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

absl::Status CheckSealedFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return CheckTrailer(bytes, path).status();
}

}  // namespace sharc::codegen
