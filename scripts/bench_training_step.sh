#!/usr/bin/env bash
# One training step of the transformer LM (bm_training_step: small, medium
# and large sizes) against the same step in torch eager (Debian's
# python3-torch, installed on first use) on the same initial parameters and
# batch, and the FMA peak (bm_codegen_gemm's BM_FmaPeak), in one run; prints
# a markdown table with the ratio, the achieved GFLOP/s and its share of the
# peak (docs/performance.md, "Whole programs").
#
#   scripts/bench_training_step.sh [build-dir]      (default: build-bench)
#   THREADS=2 scripts/bench_training_step.sh
#   SIZES="small medium" scripts/bench_training_step.sh
#
# With THREADS=1 sharc runs one kernel thread (HL_NUM_THREADS=1) and torch
# set_num_threads(1); with 2, both use two. Compare numbers only within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
THREADS=${THREADS:-1}
SIZES=${SIZES:-"small medium large"}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"

if ! /usr/bin/python3 -c "import torch" 2>/dev/null; then
  echo "installing python3-torch (Debian) ..." >&2
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q python3-torch >/dev/null
fi
if [[ ! -x "$BUILD/benchmarks/bm_training_step" || ! -x "$BUILD/benchmarks/bm_codegen_gemm" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHARC_BUILD_BENCHMARKS=ON >/dev/null
  cmake --build "$BUILD" -j2 --target bm_training_step bm_codegen_gemm
fi

echo "# raw outputs in $OUT" >&2
export HL_NUM_THREADS=$THREADS OMP_NUM_THREADS=$THREADS
# torch's products are OpenBLAS's (0.3.21), which reads OMP_NUM_THREADS for
# its thread count and picks its kernels by CPU model: one it does not know
# (Emerald Rapids, family 6 model 207) gets the SSE3 "Prescott" kernels,
# 30 GFLOP/s where SkylakeX's run at 94-140. On every AVX-512 host the
# peer gets SkylakeX's (the known ones included: AVX-512 kernels either
# way) unless the caller chose a core type
# (docs/performance.md; ../shared/reference/perf_anchors.md).
if [[ -z "${OPENBLAS_CORETYPE:-}" ]] && grep -qw avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
echo "# torch's OpenBLAS core type: ${OPENBLAS_CORETYPE:-chosen by OpenBLAS}" >&2
"$BUILD/benchmarks/bm_training_step" --dump-inputs="$OUT"
filter="BM_TrainingStep/size:($(echo "$SIZES" | sed 's/small/0/; s/medium/1/; s/large/2/' | tr ' ' '|'))/devices:1"
"$BUILD/benchmarks/bm_codegen_gemm" --benchmark_filter="BM_FmaPeak/threads:$THREADS(/real_time)?\$" \
  --benchmark_format=json >"$OUT/peak.json"
# sharc, torch, sharc again: the two sharc runs bracket torch's window.
"$BUILD/benchmarks/bm_training_step" --benchmark_filter="$filter" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$OUT/sharc1.json"
for size in $SIZES; do
  /usr/bin/python3 benchmarks/torch_training_step.py "$OUT" "$size" "$THREADS" >>"$OUT/torch.txt"
done
"$BUILD/benchmarks/bm_training_step" --benchmark_filter="$filter" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_format=json >"$OUT/sharc2.json"

/usr/bin/python3 - "$OUT" "$THREADS" <<'PY'
import json, sys
out, threads = sys.argv[1], int(sys.argv[2])
names = ["small", "medium", "large"]
peak = json.load(open(f"{out}/peak.json"))["benchmarks"][0]["GFLOPS"]  # GFLOP/s
sharc = {}
for run in ("sharc1", "sharc2"):
    for b in json.load(open(f"{out}/{run}.json"))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        size = names[int(b["run_name"].split("size:")[1].split("/")[0])]
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[b["time_unit"]]
        entry = sharc.setdefault(size, {"ms": [], "gflop": b["GFLOP_per_step"], "loss": b["loss"]})
        entry["ms"].append(b["real_time"] * unit)
torch = {}
for line in open(f"{out}/torch.txt"):
    _, size, _, ms, loss = line.split()
    torch[size] = (float(ms), float(loss))
print(f"| size | GFLOP/step | sharc ms | torch ms | torch / sharc | sharc GFLOP/s | of peak "
      f"({peak:.0f}) | loss sharc / torch |")
print("|---|---|---|---|---|---|---|---|")
for size in names:
    if size not in sharc or size not in torch:
        continue
    s = sharc[size]
    best = min(s["ms"])
    rate = s["gflop"] / (best / 1e3)
    t_ms, t_loss = torch[size]
    runs = " / ".join(f"{m:.1f}" for m in s["ms"])
    print(f"| {size} | {s['gflop']:.1f} | {runs} | {t_ms:.1f} | {t_ms / best:.2f} | {rate:.1f} | "
          f"{rate / peak:.0%} | {s['loss']:.6f} / {t_loss:.6f} |")
print(f"\n{threads} thread(s); sharc's two runs bracket torch's.")
PY
