#!/usr/bin/env bash
# In-process collectives (bm_collectives) against Open MPI (bm_mpi_collectives
# under mpirun -np 2 and -np 4) and memcpy, on 4 KiB..64 MiB; prints a
# markdown table (see docs/performance_log.md, "Collectives").
#
#   scripts/bench_collectives.sh [build-dir]      (default: build-bench)
#   MIN_TIME=0.5 scripts/bench_collectives.sh     (seconds per gbench case)
#
# The machine has 2 cores shared with others: run it when the machine is
# quiet, and compare numbers only within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-bench}
MIN_TIME=${MIN_TIME:-0.2}
OUT=${OUT:-$(mktemp -d)}

if [[ ! -x "$BUILD/benchmarks/bm_collectives" || ! -x "$BUILD/benchmarks/bm_mpi_collectives" ]]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j2 --target bm_collectives bm_mpi_collectives
fi

echo "# raw outputs in $OUT" >&2
"$BUILD/benchmarks/bm_collectives" --benchmark_min_time="$MIN_TIME" \
  --benchmark_format=json >"$OUT/inprocess.json"
for np in 2 4; do
  mpirun --allow-run-as-root --oversubscribe -np "$np" \
    "$BUILD/benchmarks/bm_mpi_collectives" >"$OUT/mpi_np$np.txt"
done

/usr/bin/python3 - "$OUT" <<'EOF'
import json, re, sys
out = sys.argv[1]
ops = {"kAllReduce": "all-reduce", "kAllGather": "all-gather",
       "kReduceScatter": "reduce-scatter", "kAllToAll": "all-to-all"}
inproc, memcpy, baseline = {}, {}, {}
for b in json.load(open(f"{out}/inprocess.json"))["benchmarks"]:
    name = b["name"]
    us = b["real_time"] * {"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[b["time_unit"]]
    m = re.match(r"BM_Collective<Op::(\w+)>/(\d+)/real_time/threads:(\d+)", name)
    if m:
        inproc[(ops[m.group(1)], int(m.group(2)), int(m.group(3)))] = us
        continue
    m = re.match(r"BM_BaselineSharedAllReduce/(\d+)/real_time/threads:(\d+)", name)
    if m:
        baseline[(int(m.group(1)), int(m.group(2)))] = us
        continue
    m = re.match(r"BM_Memcpy/(\d+)/real_time", name)
    if m:
        memcpy[int(m.group(1))] = us
mpi = {}
for np in (2, 4):
    for line in open(f"{out}/mpi_np{np}.txt"):
        m = re.match(r"mpi (\S+) np=(\d+) bytes=(\d+) us=([\d.]+)", line)
        if m:
            mpi[(m.group(1), int(m.group(3)), int(m.group(2)))] = float(m.group(4))

def size(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"

def gbps(b, us):
    return b / (us * 1e-6) / 1e9

print("| collective | size | devices | in-process us (GB/s) | MPI us (GB/s) | vs MPI | memcpy us (GB/s) | 5.3 baseline us |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for op in ops.values():
    for n in (2, 4):
        for b in sorted({k[1] for k in inproc}):
            i, m, c = inproc.get((op, b, n)), mpi.get((op, b, n)), memcpy.get(b)
            if i is None:
                continue
            cell = lambda us: f"{us:.2f} ({gbps(b, us):.1f})" if us is not None else "-"
            speed = f"{m / i:.1f}x" if m else "-"
            base = baseline.get((b, n)) if op == "all-reduce" else None
            base = f"{base:.2f}" if base is not None else ""
            print(f"| {op} | {size(b)} | {n} | {cell(i)} | {cell(m)} | {speed} | {cell(c)} | {base} |")
EOF
