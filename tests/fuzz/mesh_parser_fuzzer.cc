// libFuzzer target for spmd::Mesh::Parse, which reads the `--mesh` flag
// ("x=2,y=4" or "{x=2, y=4}"). Any text must either be rejected with a status
// or parse into a mesh whose printed form parses back to the same mesh; a
// crash, a sanitizer report, an allocation past libFuzzer's malloc limit (a
// mesh nobody could run) or a changed mesh is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "spmd/mesh.h"
#include "tests/fuzz/fuzz_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sharc::spmd::Mesh;
  auto mesh = Mesh::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!mesh.ok()) return 0;
  FUZZ_CHECK_ROUND_TRIP("mesh_parser_fuzzer", *mesh, Mesh::Parse,
                        [](const Mesh& m) { return m.ToString(); });
  return 0;
}
