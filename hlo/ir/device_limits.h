// The most devices sharc accepts anywhere a count or a mesh is read (module
// headers, tile assignments, shard_map meshes, the `--mesh` flag): far above
// any machine sharc runs on, and low enough that per-device tables (device
// ids, replica groups) stay small and products of axis sizes cannot overflow.
#pragma once

#include <cstdint>

namespace sharc::hlo {

inline constexpr int64_t kMaxDevices = int64_t{1} << 20;

}  // namespace sharc::hlo
