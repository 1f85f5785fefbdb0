"""The MapReduce example in its three lowerings, from Python.

DrJAX's blocks (mapreduce.broadcast / map / mean) lowered with internal
sharding constraints ("annotated"), without them ("ns"), and as a loop over
the groups ("loop"): the same numbers, different per-device costs.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/mapreduce_modes.py \
        [examples/fedavg_round.hlo]
"""
import argparse
import pathlib

import numpy as np

import sharc

HERE = pathlib.Path(__file__).resolve().parent
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("module", nargs="?", default=HERE.parent / "fedavg_round.hlo")
args = parser.parse_args()

module = sharc.load(args.module)
print(f"{module!r}, mesh {module.mesh}")
rng = np.random.default_rng(0)
inputs = [rng.uniform(-1, 1, p.shape).astype(np.float32) for p in module.parameters]

results = {}
print(f"{'mode':10} {'ms':>8} {'GFLOP/dev':>10} {'peak MiB':>9} {'sent KiB':>9}")
for mode in ("annotated", "ns", "loop"):
    exe = sharc.compile(module, mapreduce_mode=mode)
    results[mode] = exe(*inputs)
    timing = exe.time(5)
    report = exe.report()
    print(f"{mode:10} {timing.median * 1e3:8.2f} {report['flops'] / 1e9:10.3f} "
          f"{report['peak_memory_in_bytes'] / 2**20:9.2f} "
          f"{report['communication_bytes'] / 2**10:9.1f}")

for mode in ("ns", "loop"):
    np.testing.assert_allclose(results[mode], results["annotated"], rtol=1e-4, atol=1e-5)
print("all three lowerings compute the same result")

# The same comparison from the cost model alone, as rows for a DataFrame.
for row in sharc.compare(module):
    print(row["variant"], {k: row[k] for k in ("flops", "communication_bytes")})
