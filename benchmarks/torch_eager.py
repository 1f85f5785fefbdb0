"""torch eager peers of bm_codegen_elementwise's kernels, same sizes and inputs.

Run by scripts/bench_vs_torch.sh with Debian's /usr/bin/python3 and
python3-torch; prints one line per kernel: `torch <name> <median ms>`.
Usage: torch_eager.py THREADS [REPS]
"""
import statistics
import sys
import time

import torch

CHAIN = 1 << 24  # 16M floats, as kChain
SUM = 1 << 26    # 64M floats, as kSum
ROWS, COLS = 4096, 1024


def median_ms(fn, reps):
    fn()  # warm-up: allocator and thread pool
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    threads = int(sys.argv[1])
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    torch.set_num_threads(threads)
    x = (torch.arange(CHAIN, dtype=torch.float32) % 2000) / 1000.0 - 1.0
    a, b = 0.5, 0.25
    rows = ((torch.arange(ROWS * COLS, dtype=torch.int64) * 7919) % 2000).to(torch.float32)
    rows = (rows / 1000.0 - 1.0).reshape(ROWS, COLS)
    v = torch.full((SUM,), 0.5, dtype=torch.float32)
    with torch.no_grad():
        kernels = {
            "tanh_chain": lambda: torch.tanh(a * x + b),
            "softmax_rows": lambda: torch.softmax(rows, dim=1),
            "layernorm_rows": lambda: torch.nn.functional.layer_norm(rows, (COLS,)),
            "sum": lambda: v.sum(),
        }
        for name, fn in kernels.items():
            print(f"torch {name} {median_ms(fn, reps):.3f}", flush=True)


if __name__ == "__main__":
    main()
