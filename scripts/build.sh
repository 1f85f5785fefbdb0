#!/usr/bin/env bash
# Installs the system dependencies (Debian packages only) and builds sharc
# into build/ (Release). Safe to run again: both steps are incremental.
#
#   scripts/build.sh [extra cmake -D options...]
#
# Environment: SHARC_BUILD_DIR (default build), SHARC_JOBS (default 2),
# SHARC_TARGETS (default: everything; the main job builds only its own).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${SHARC_BUILD_DIR:-build}"
jobs="${SHARC_JOBS:-2}"

scripts/install_deps.sh

configure_args=(-S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@")
# A build directory keeps the generator it was created with; only choose one
# for a fresh directory (switching generators in place is a CMake error).
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  if command -v ninja >/dev/null 2>&1; then
    configure_args+=(-G Ninja)
  else
    configure_args+=(-G "Unix Makefiles")
  fi
fi

echo "build.sh: configuring $build_dir"
cmake "${configure_args[@]}" >/dev/null
targets=()
for t in ${SHARC_TARGETS:-}; do targets+=(--target "$t"); done
echo "build.sh: building ${SHARC_TARGETS:-everything} in $build_dir with $jobs jobs"
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
echo "build.sh: done ($build_dir/tools/sharc)"
