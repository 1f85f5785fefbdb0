#!/usr/bin/env bash
# The main job: builds sharc, then runs the example sharded MLP layer on two
# devices with deterministic random inputs and prints its results.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/build.sh >&2
build_dir="${SHARC_BUILD_DIR:-build}"

echo "\$ sharc run examples/sharded_matmul.hlo --devices 2 --random-inputs" >&2
exec "$build_dir/tools/sharc" run examples/sharded_matmul.hlo --devices 2 --random-inputs
