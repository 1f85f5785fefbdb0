"""What do sharding annotations buy? A notebook-style tour of sharc from Python.

Loads a sharded HLO module (an MLP whose one internal sharding constraint
splits the batch), annotates that constraint for 1, 2 and 4 devices,
compares each with the same program without its internal annotations, runs
it (checking every run against the 1-device result) and plots per-device
memory and bytes sent, annotated next to unannotated, with matplotlib.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compare_shardings.py \
        [examples/constrained_mlp.hlo] [--out out/]
"""
import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")  # files, not windows
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import sharc  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("module", nargs="?", default=HERE.parent / "constrained_mlp.hlo")
parser.add_argument("--constraint", default="xs",
                    help="the value whose sharding constraint splits its first dimension "
                         "over the devices (constrained_mlp.hlo's %%xs)")
parser.add_argument("--out", default="out", help="folder for the plot")
args = parser.parse_args()

# %% The module and its annotations
module = sharc.load(args.module)
print(repr(module))
for p in module.parameters:
    print(f"  %{p.name}: {p.type} sharding={p.sharding}")


def annotated_for(devices):
    """The module with its internal constraint re-annotated for `devices`:
    the value's first dimension split `devices` ways."""
    tiles = "{replicated}" if devices == 1 else f"{{devices=[{devices},1]<=[{devices}]}}"
    return module.with_sharding(args.constraint, tiles)


# %% Annotated vs unannotated on 1, 2 and 4 devices: the cost model, then real runs
rng = np.random.default_rng(0)
inputs = [rng.uniform(-1, 1, p.shape).astype(np.float32) for p in module.parameters]
reference = None
rows = []
for devices in (1, 2, 4):
    annotated = annotated_for(devices)
    for row in sharc.compare(annotated, devices):
        row["devices"] = devices
        rows.append(row)
    exe = sharc.compile(annotated, devices)
    result = exe(*inputs)
    if reference is None:
        reference = result
    np.testing.assert_allclose(result, reference, rtol=1e-4, atol=1e-4)
    print(f"{devices} device(s): {exe.time(5).median * 1e3:7.2f} ms per run (annotated)")

print(f"\n{'devices':>7} {'variant':>12} {'GFLOP/dev':>10} {'peak MiB':>9} {'sent KiB':>9}")
for r in rows:
    print(f"{r['devices']:7} {r['variant']:>12} {r['flops'] / 1e9:10.3f} "
          f"{r['peak_memory_in_bytes'] / 2**20:9.2f} {r['communication_bytes'] / 2**10:9.1f}")

# %% Plot per-device memory and bytes sent, annotated next to unannotated
out = pathlib.Path(args.out)
out.mkdir(parents=True, exist_ok=True)
fig, (memory, sent) = plt.subplots(1, 2, figsize=(9, 3.5))
counts = (1, 2, 4)
for offset, variant in ((-0.2, "annotated"), (0.2, "unannotated")):
    mine = {r["devices"]: r for r in rows if r["variant"] == variant}
    xs = [i + offset for i in range(len(counts))]
    memory.bar(xs, [mine[d]["peak_memory_in_bytes"] / 2**20 for d in counts], width=0.4,
               label=variant)
    sent.bar(xs, [mine[d]["communication_bytes"] / 2**10 for d in counts], width=0.4,
             label=variant)
for axis, title, unit in ((memory, "peak memory per device", "MiB"),
                          (sent, "bytes sent per device", "KiB")):
    axis.set_xticks(range(len(counts)), [str(d) for d in counts])
    axis.set(title=title, xlabel="devices", ylabel=unit)
    axis.legend()
fig.suptitle(module.name)
fig.tight_layout()
png = out / f"{module.name}_devices.png"
fig.savefig(png, dpi=100)
print(f"\nplot: {png}")
