#!/usr/bin/env bash
# The fused elementwise kernels (bm_codegen_elementwise: tanh(a*x+b) over 16M
# floats, softmax and layernorm over rows of [4096,1024], a 64M-float sum)
# against torch eager (Debian's python3-torch, installed on first use) and
# STREAM copy, on 1 thread, run back to back in one window; prints a markdown
# table (docs/performance_log.md, "Against torch eager").
#
#   scripts/bench_vs_torch.sh [build-dir]          (default: build-bench)
#   THREADS=2 scripts/bench_vs_torch.sh
#
# Run it on a quiet machine; compare numbers only within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
THREADS=${THREADS:-1}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "installing python3-torch (Debian) ..." >&2
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q python3-torch >/dev/null
fi
if [[ ! -x "$BUILD/benchmarks/bm_codegen_elementwise" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARC_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build "$BUILD" -j2 --target bm_codegen_elementwise
fi

echo "# raw outputs in $OUT" >&2
export HL_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
# Halide, torch, Halide again: the two Halide runs bracket torch's window.
"$BUILD/benchmarks/bm_codegen_elementwise" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$OUT/halide1.json"
/usr/bin/python3 benchmarks/torch_eager.py "$THREADS" >"$OUT/torch.txt"
"$BUILD/benchmarks/bm_codegen_elementwise" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$OUT/halide2.json"

/usr/bin/python3 - "$OUT" "$THREADS" <<'PY'
import json, sys
out, threads = sys.argv[1], int(sys.argv[2])
def medians(path):
    ms = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[b["time_unit"]]
        # "BM_X/real_time" -> BM_X; "BM_StreamCopy/2/real_time" -> BM_StreamCopy/2
        ms[b["run_name"].removesuffix("/real_time")] = b["real_time"] * unit
    return ms
h1, h2 = medians(f"{out}/halide1.json"), medians(f"{out}/halide2.json")
torch = {}
for line in open(f"{out}/torch.txt"):
    _, name, value = line.split()
    torch[name] = float(value)
rows = [("tanh(a*x+b), 16M f32", "BM_HalideTanhChain", "BM_LoopTanhChain", "tanh_chain", 2 * 4 * (1 << 24)),
        ("softmax rows [4096,1024]", "BM_HalideSoftmaxRows", "BM_LoopSoftmaxRows", "softmax_rows", 2 * 4 * 4096 * 1024),
        ("layernorm rows [4096,1024]", "BM_HalideLayernormRows", "BM_LoopLayernormRows", "layernorm_rows", 2 * 4 * 4096 * 1024),
        ("sum of 64M f32", "BM_HalideSum", "BM_LoopSum", "sum", 4 * (1 << 26))]
copy = [h[f"BM_StreamCopy/{threads}"] for h in (h1, h2)]  # the peer on as many threads
copy_gbps = [2 * 4 * (1 << 24) / (c * 1e-3) / 1e9 for c in copy]
print(f"STREAM copy (16M f32): {copy[0]:.2f} / {copy[1]:.2f} ms = {copy_gbps[0]:.1f} / {copy_gbps[1]:.1f} GB/s")
print()
print("| kernel | Halide (two runs) | plain loop | torch eager | torch / Halide | Halide GB/s / STREAM copy GB/s |")
print("|---|---:|---:|---:|---:|---:|")
for label, hal, loop, tname, nbytes in rows:
    hs = [h[hal] for h in (h1, h2)]
    best = min(hs)
    gbps = nbytes / (best * 1e-3) / 1e9
    print(f"| {label} | {hs[0]:.2f} / {hs[1]:.2f} ms | {h1[loop]:.2f} ms | {torch[tname]:.2f} ms | "
          f"{torch[tname] / best:.2f}x | {gbps / max(copy_gbps):.2f} |")
PY
