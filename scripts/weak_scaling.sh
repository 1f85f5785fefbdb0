#!/usr/bin/env bash
# The papers' weak-scaling comparison: builds the benchmarks (in
# build-bench/), runs benchmarks/bm_fedavg_weak_scaling (FedAvg rounds of
# the transformer LM for n = 1, 2, 4, 8 groups on as many devices, compiled
# annotated / ns / loop, data split by group or replicated), and writes
# docs/weak_scaling.csv and docs/weak_scaling.png (gnuplot).
#
#   scripts/weak_scaling.sh
#
# Environment: SHARC_BENCH_BUILD_DIR (default build-bench), SHARC_JOBS (2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build_dir="${SHARC_BENCH_BUILD_DIR:-build-bench}"
jobs="${SHARC_JOBS:-2}"

scripts/install_deps.sh
if ! command -v gnuplot >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends gnuplot-nox >/dev/null
fi
generator=()
if [ ! -f "$build_dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSHARC_BUILD_BENCHMARKS=ON >/dev/null
cmake --build "$build_dir" -j "$jobs" --target bm_fedavg_weak_scaling

json="$build_dir/weak_scaling.json"
"$build_dir/benchmarks/bm_fedavg_weak_scaling" --benchmark_out="$json" --benchmark_out_format=json
/usr/bin/python3 scripts/weak_scaling_csv.py "$json" docs/weak_scaling.csv
gnuplot scripts/weak_scaling.gnuplot
echo "weak_scaling.sh: wrote docs/weak_scaling.csv and docs/weak_scaling.png"
