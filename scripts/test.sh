#!/usr/bin/env bash
# Builds sharc and runs the whole test suite (GoogleTest + lit golden tests).
# With --full, or when CI=true, also builds and tests under AddressSanitizer +
# UBSan (build-asan/) and runs the parser fuzzers for a bounded time.
#
#   scripts/test.sh [--full]
#
# Environment: SHARC_JOBS (default 2), SHARC_FUZZ_SECONDS (default 60),
# SHARC_BUILD_DIR (default build), SHARC_ASAN_BUILD_DIR (default build-asan).
# Exits non-zero if any step fails; the last line is a summary.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${SHARC_JOBS:-2}"
asan_dir="${SHARC_ASAN_BUILD_DIR:-build-asan}"
full=0
if [ "${CI:-}" = "true" ]; then full=1; fi
for arg in "$@"; do
  case "$arg" in
    --full) full=1 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

passed=()
failed=()
start=$SECONDS

# Runs one named step; records the result and keeps going so that the
# summary shows every failure, not just the first.
step() {
  local name="$1"
  shift
  echo "==> test.sh: $name"
  local t0=$SECONDS
  if "$@"; then
    passed+=("$name")
    echo "==> test.sh: $name passed ($((SECONDS - t0))s)"
  else
    failed+=("$name")
    echo "==> test.sh: $name FAILED ($((SECONDS - t0))s)"
  fi
}

summary() {
  local total=$((${#passed[@]} + ${#failed[@]}))
  if [ ${#failed[@]} -eq 0 ]; then
    echo "test.sh: PASSED: all $total steps ok (${passed[*]}) in $((SECONDS - start))s"
    exit 0
  fi
  echo "test.sh: FAILED: ${#failed[@]} of $total steps failed (${failed[*]}) in $((SECONDS - start))s"
  exit 1
}

step build scripts/build.sh
if [ ${#failed[@]} -ne 0 ]; then summary; fi
step ctest ctest --test-dir "${SHARC_BUILD_DIR:-build}" --output-on-failure -j "$jobs" -LE mpi

# The MPI backend's tests (registered only when CMake found MPI) launch
# mpirun themselves and run one at a time, so they get their own step
# (about 30 s on two cores).
mpi_tests() {
  local listed
  listed=$(ctest --test-dir "${SHARC_BUILD_DIR:-build}" -N -L mpi | grep -c 'Test *#')
  if [ "$listed" -eq 0 ]; then
    echo "test.sh: no MPI tests registered (MPI not found); skipping"
    return 0
  fi
  ctest --test-dir "${SHARC_BUILD_DIR:-build}" --output-on-failure -L mpi --timeout 120
}
# (Not under the sanitizers: Open MPI's own allocations would drown
# LeakSanitizer's report.)
step mpi mpi_tests

if [ "$full" -eq 1 ]; then
  # The sanitizer build covers where bad input enters and where memory is
  # shared between threads: the IR, parser and interpreter, propagation, the
  # partitioner, the runtime and the `sharc` command (their test binaries and
  # the lit tests). The frontend, autodiff, codegen and example tests run in
  # the Release build above; building them again under ASan would double
  # CI's time for code that reaches the same libraries.
  asan_targets=(sharc hlo_tests spmd_tests partition_tests runtime_tests tools_tests)
  asan_labels='^(hlo|spmd|partition|runtime|tools|lit)$'
  asan_configure() {
    # -O1: the sanitizers need no more, and it compiles much faster than
    # Release's -O3 (the sanitizer build was over half of CI's time).
    local args=(-S . -B "$asan_dir" -DCMAKE_BUILD_TYPE=Release
                "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
                -DSHARC_SANITIZE=address,undefined -DSHARC_BUILD_BENCHMARKS=OFF)
    if [ ! -f "$asan_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
      args+=(-G Ninja)
    fi
    cmake "${args[@]}" >/dev/null && cmake --build "$asan_dir" -j "$jobs" --target "${asan_targets[@]}"
  }
  step asan-build asan_configure
  if [[ " ${failed[*]} " != *" asan-build "* ]]; then
    step asan-ctest env ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L "$asan_labels" -LE mpi
  fi
  if [ -f scripts/run_fuzzer.sh ]; then
    step fuzz bash scripts/run_fuzzer.sh "${SHARC_FUZZ_SECONDS:-60}"
  else
    echo "==> test.sh: scripts/run_fuzzer.sh not present; fuzzing skipped"
  fi
fi

summary
