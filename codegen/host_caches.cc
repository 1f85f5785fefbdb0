#include "codegen/host_caches.h"

#include <unistd.h>

#include <cctype>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace sharc::codegen {
namespace {

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

HostCaches Detect() {
  HostCaches caches;
  bool l1 = false, l2 = false;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = absl::StrCat("/sys/devices/system/cpu/cpu0/cache/index", index, "/");
    const std::string level = ReadLine(dir + "level");
    if (level.empty()) break;
    const std::string type = ReadLine(dir + "type");
    const int64_t size = ParseCacheSize(ReadLine(dir + "size"));
    if (size <= 0) continue;
    if (level == "1" && type == "Data") {
      caches.l1d_bytes = size;
      l1 = true;
    } else if (level == "2" && (type == "Unified" || type == "Data")) {
      caches.l2_bytes = size;
      l2 = true;
    }
  }
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (!l1) {
    if (const long size = sysconf(_SC_LEVEL1_DCACHE_SIZE); size > 0) caches.l1d_bytes = size;
  }
  if (!l2) {
    if (const long size = sysconf(_SC_LEVEL2_CACHE_SIZE); size > 0) caches.l2_bytes = size;
  }
#endif
  return caches;
}

}  // namespace

int64_t ParseCacheSize(const std::string& text) {
  if (text.empty()) return -1;
  int64_t unit = 1;
  std::string digits = text;
  const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
  if (last == 'K' || last == 'M' || last == 'G') {
    unit = last == 'K' ? int64_t{1} << 10 : last == 'M' ? int64_t{1} << 20 : int64_t{1} << 30;
    digits.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(digits, &value) || value <= 0) return -1;
  return value * unit;
}

const HostCaches& HostCacheSizes() {
  static const HostCaches caches = Detect();
  return caches;
}

}  // namespace sharc::codegen
