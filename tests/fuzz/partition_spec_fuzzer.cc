// libFuzzer target for spmd::PartitionSpec::Parse ("P(x, None)",
// "P((x,y), _)"), which reads the partition specs the C API, the Python
// package and the `sharc` flags take. Any text must either be rejected with a
// status or parse into a spec whose printed form parses back to the same
// spec; a crash, a sanitizer report or a changed spec is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spmd/mesh.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::spmd::PartitionSpec;
  auto spec = PartitionSpec::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!spec.ok()) return 0;
  FUZZ_CHECK_ROUND_TRIP("partition_spec_fuzzer", *spec, PartitionSpec::Parse,
                        [](const PartitionSpec& p) { return p.ToString(); });
  return 0;
}
