#!/usr/bin/env bash
# Builds the fuzzer with clang-14 (libFuzzer + ASan + UBSan) in build-fuzz
# and runs the HLO parser's for N seconds (default 60), seeded with the
# conformance corpus. Exits non-zero if it finds a crash.
#   scripts/run_fuzzer.sh [SECONDS] [extra libFuzzer flags...]
set -euo pipefail

SECONDS_TO_RUN="${1:-60}"
shift || true
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
SHARED="$(cd "$ROOT/../shared" && pwd)"

# C++ at -O1 with line tables only, as fuzzing builds usually are: the
# sanitizers' reports still name file:line, the build is much faster than
# -O2 -g, and without -DNDEBUG the asserts stay on.
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DSHARC_FUZZ=ON -DSHARC_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$BUILD" --target hlo_parser_fuzzer -j"$(nproc)"

# Runs fuzzer $1 on corpus $2 for $3 seconds with inputs up to $4 bytes
# (and the script's extra flags); exits on a finding.
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"
fuzz() {
  local fuzzer="$1" corpus="$2" seconds="$3" max_len="$4" status=0
  shift 4
  echo "Running $fuzzer for ${seconds}s (corpus: $corpus)"
  "$BUILD/tests/$fuzzer" "$corpus" \
    -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$ARTIFACTS/" -print_final_stats=1 "$@" || status=$?
  if [[ $status -ne 0 ]]; then
    echo "$fuzzer found a problem (exit $status); reproducer(s) in $ARTIFACTS" >&2
    exit "$status"
  fi
  echo "no crash in ${seconds}s"
}

# The fuzzer writes new inputs into the first corpus directory; keep the
# shared seeds read-only by copying them into a working corpus.
CORPUS="$BUILD/fuzz-corpus"
mkdir -p "$CORPUS"
cp "$SHARED"/conformance/propagation/*.hlo "$SHARED"/conformance/partition/*.hlo "$CORPUS"/
fuzz hlo_parser_fuzzer "$CORPUS" "$SECONDS_TO_RUN" 8192 "$@"

