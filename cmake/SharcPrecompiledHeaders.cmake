# Precompiled headers: most of a sharc source file's compile time used to be
# the same standard, Abseil, GoogleTest and hlo/ headers parsed again
# (parser_test.cc: 10.8 s, of which 3.1 s headers alone; hlo/ir/module.cc:
# 7.0 s, 1.8 s headers). Each target precompiles the set below once, so CI's
# two full builds stop paying for it per file. The headers are force-included,
# so a file that forgets an include still compiles here: configure with
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON now and then to catch that. A change
# to one of these headers recompiles the whole target.
set(SHARC_PCH_COMMON
  <algorithm> <cmath> <cstdint> <functional> <memory> <optional> <string> <utility> <vector>
  <absl/container/flat_hash_map.h> <absl/container/flat_hash_set.h>
  <absl/status/status.h> <absl/status/statusor.h>
  <absl/strings/str_cat.h> <absl/strings/str_join.h> <absl/types/span.h>)

# The IR's own headers, for every target above hlo/ in the dependency order.
set(SHARC_PCH_IR <hlo/base/status_macros.h> <hlo/ir/computation.h> <hlo/ops/op_def.h>)

# sharc_precompile_headers(target [extra headers...]): the common set plus
# `extra`, precompiled for `target` alone (each target's flags differ, so
# they do not share one).
function(sharc_precompile_headers target)
  target_precompile_headers(${target} PRIVATE ${SHARC_PCH_COMMON} ${ARGN})
endfunction()
