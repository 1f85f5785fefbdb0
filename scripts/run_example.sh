#!/usr/bin/env bash
# The main job: builds sharc, then runs a short version of the papers'
# experiment on the in-process device mesh -- a transformer LM trained by
# FedAvg with the MapReduce blocks over 4 groups on 4 devices, printing the
# loss per round, then one round compiled annotated / ns / loop side by side
# (time, FLOPs, peak memory and bytes sent per device).
#
#   scripts/run_example.sh [fedavg_lm flags, e.g. --rounds 20 --groups 8 --devices 8]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Only what the job runs (the sharc command and fedavg_lm), not the tests
# and benchmarks: a fresh machine builds about half as much.
SHARC_TARGETS="${SHARC_TARGETS:-sharc fedavg_lm}" scripts/build.sh >&2
build_dir="${SHARC_BUILD_DIR:-build}"

args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(--rounds 5 --groups 4 --devices 4); fi
echo "\$ fedavg_lm ${args[*]}" >&2
exec "$build_dir/examples/transformer_lm/fedavg_lm" "${args[@]}"
