#!/usr/bin/python3
"""Writes the seed corpora of the fuzzers other than the HLO parser's (whose
seeds are the conformance .hlo files) into DIR/<fuzzer>/, one file a seed:
a few valid inputs of each grammar, for libFuzzer to mutate from.

  scripts/fuzz_seeds.py DIR

Valid .npy files come from NumPy itself (Debian's python3-numpy, installed
by scripts/install_deps.sh), so the reader is seeded with what users save.
"""
import io
import pathlib
import struct
import sys

import numpy as np

MESHES = ["x=2,y=4", "{x=2, y=4}", "data=8", "clients=2,data=2", "{i=1}", "{}"]
PARTITION_SPECS = ["P(x, None)", "P((x,y), _)", "P()", "P(data)", "P(None, (clients,data))"]
SHARD_MAP_ATTRS = ["i=4, j=2", "P(i), P((i,j), None)", "P()", "i,j", "P(_, i), P(j)"]
# mesh line, shape line, sharding (sharding_text_fuzzer.cc)
SHARDING_TEXTS = [
    "x=2,y=2\nf32[8,4]\nP(x, y)",
    "clients=2,data=2\nf32[4,6,2]\nP((clients,data), None)",
    "x=2,y=2\nf32[8,4]\nP(None, x)",
    "\nf32[8]\n{devices=[2]0,1}",
    "x=4\nf32[8,2]\n{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}",
    "x=2\n(f32[2], s32[])\n{{replicated}, {maximal device=1}}",
]

# Shardy attributes as JAX writes them (sdy_attributes_fuzzer.cc)
SDY_ATTRIBUTES = [
    '#sdy.sharding<@mesh, [{"x"}, {"y", ?}p1, {}], replicated={"z"}>',
    '#sdy.sharding_per_value<[<@mesh, [{"y":(1)2}, {"y":(2)2, "x"}]>, <@mesh, []>]>',
    '#sdy.sharding<mesh<["x"=2, "y"=4, "z"=2], device_ids=[3,2,1,0]>, [{"z"}, {?}], unreduced={"x"}>',
    '{mesh = #sdy.mesh<["x"=2, "y"=4]>, solo = #sdy.mesh<[], device_ids=[3]>}',
    '#sdy<manual_axes{"x", "z"}>',
    '{xla.sdy.manual_axes="#sdy<manual_axes{\\"x\\"}>",inlineable="false"}',
]


def npy_seeds():
    arrays = [
        np.arange(6, dtype="<f4").reshape(2, 3),
        np.array(7, dtype="<i8"),
        np.array([1 + 2j, -3.5j], dtype="<c8"),
        np.array([[1 - 1j]], dtype="<c16"),
        np.array([True, False, True]),
        np.zeros((0, 3), dtype="u1"),
        np.arange(4, dtype="<f2"),
        np.arange(8, dtype="<u2").reshape(2, 2, 2),
        np.array([1.5, -2.0], dtype="<f8"),
    ]
    seeds = []
    for a in arrays:
        out = io.BytesIO()
        np.save(out, a)
        seeds.append(out.getvalue())
    # Format versions 2.0 and 3.0 (4-byte header length).
    for version in [(2, 0), (3, 0)]:
        out = io.BytesIO()
        np.lib.format.write_array(out, np.arange(3, dtype="<i4"), version=version)
        seeds.append(out.getvalue())
    return seeds


def sealed(obj):
    """obj followed by the kernel cache's trailer (codegen/cache_seal.h)."""
    h = 14695981039346656037
    mask = (1 << 64) - 1
    whole = len(obj) // 8 * 8
    for i in range(0, whole, 8):
        h = ((h ^ int.from_bytes(obj[i:i + 8], "little")) * 1099511628211) & mask
    for b in obj[whole:]:
        h = ((h ^ b) * 1099511628211) & mask
    return obj + b"sharcobj" + struct.pack("<QQ", len(obj), h)


def cache_seal_seeds():
    return [b"", sealed(b""), sealed(b"\x7fELF" + bytes(range(40))), b"sharcobj" + bytes(16)]


def main():
    root = pathlib.Path(sys.argv[1])
    corpora = {
        "npy_fuzzer": npy_seeds(),
        "mesh_parser_fuzzer": MESHES,
        "partition_spec_fuzzer": PARTITION_SPECS,
        "shard_map_attrs_fuzzer": SHARD_MAP_ATTRS,
        "sharding_text_fuzzer": SHARDING_TEXTS,
        "cache_seal_fuzzer": cache_seal_seeds(),
        "sdy_attributes_fuzzer": SDY_ATTRIBUTES,
    }
    for fuzzer, seeds in corpora.items():
        folder = root / fuzzer
        folder.mkdir(parents=True, exist_ok=True)
        for i, seed in enumerate(seeds):
            data = seed.encode() if isinstance(seed, str) else seed
            (folder / f"seed{i}").write_bytes(data)


if __name__ == "__main__":
    main()
