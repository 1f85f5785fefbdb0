#!/usr/bin/env bash
# Builds the fuzzers with clang-14 (libFuzzer + ASan + UBSan) in build-fuzz
# and runs each: the HLO parser's for N seconds (default 60), seeded with the
# conformance corpus and the repository's .hlo files, and every other
# parser's (tests/fuzz/) for N/3 seconds but at least 10, seeded by
# scripts/fuzz_seeds.py. Exits non-zero at the first finding, naming the
# reproducer.
#   scripts/run_fuzzer.sh [SECONDS] [extra libFuzzer flags...]
# SHARC_FUZZERS="npy_fuzzer ..." runs only those (each for SECONDS).
set -euo pipefail

SECONDS_TO_RUN="${1:-60}"
shift || true
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/build-fuzz"
SHARED="$(cd "$ROOT/../shared" && pwd)"

# Fuzzer name and the most bytes an input of its grammar needs.
declare -A MAX_LEN=(
  [hlo_parser_fuzzer]=8192
  [npy_fuzzer]=4096
  [mesh_parser_fuzzer]=256
  [partition_spec_fuzzer]=256
  [shard_map_attrs_fuzzer]=256
  [sharding_text_fuzzer]=512
  [cache_seal_fuzzer]=512
  [sdy_attributes_fuzzer]=512
)
ALL_FUZZERS="hlo_parser_fuzzer npy_fuzzer mesh_parser_fuzzer partition_spec_fuzzer"
ALL_FUZZERS+=" shard_map_attrs_fuzzer sharding_text_fuzzer cache_seal_fuzzer sdy_attributes_fuzzer"
FUZZERS="${SHARC_FUZZERS:-$ALL_FUZZERS}"

# C++ at -O1 with line tables only, as fuzzing builds usually are: the
# sanitizers' reports still name file:line, the build is much faster than
# -O2 -g, and without -DNDEBUG the asserts stay on.
cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DSHARC_FUZZ=ON -DSHARC_BUILD_BENCHMARKS=OFF >/dev/null
# shellcheck disable=SC2086  # FUZZERS is a list of target names
cmake --build "$BUILD" --target $FUZZERS -j"$(nproc)"

# Runs fuzzer $1 on corpus $2 for $3 seconds (and the script's extra
# flags); exits on a finding.
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"
fuzz() {
  local fuzzer="$1" corpus="$2" seconds="$3" status=0
  shift 3
  echo "Running $fuzzer for ${seconds}s (corpus: $corpus)"
  "$BUILD/tests/$fuzzer" "$corpus" \
    -max_total_time="$seconds" -max_len="${MAX_LEN[$fuzzer]}" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$ARTIFACTS/$fuzzer-" -print_final_stats=1 "$@" || status=$?
  if [[ $status -ne 0 ]]; then
    echo "$fuzzer found a problem (exit $status); reproducer(s) in $ARTIFACTS/$fuzzer-*" >&2
    exit "$status"
  fi
  echo "no crash in ${seconds}s"
}

# The fuzzers write new inputs into the first corpus directory; keep the
# shared seeds read-only by copying them into working corpora.
CORPORA="$BUILD/fuzz-corpus"
mkdir -p "$CORPORA/hlo_parser_fuzzer"
# The examples and lit tests add what the conformance corpus lacks
# (shard_map and its named-axis collectives, complex values).
cp "$SHARED"/conformance/propagation/*.hlo "$SHARED"/conformance/partition/*.hlo \
  "$ROOT"/examples/*.hlo "$ROOT"/tests/lit/*.hlo "$CORPORA/hlo_parser_fuzzer"/
/usr/bin/python3 "$ROOT/scripts/fuzz_seeds.py" "$CORPORA"

SHARE=$((SECONDS_TO_RUN / 3 > 10 ? SECONDS_TO_RUN / 3 : 10))
for fuzzer in $FUZZERS; do
  seconds="$SHARE"
  if [[ $fuzzer == hlo_parser_fuzzer || -n "${SHARC_FUZZERS:-}" ]]; then
    seconds="$SECONDS_TO_RUN"
  fi
  fuzz "$fuzzer" "$CORPORA/$fuzzer" "$seconds" "$@"
done
